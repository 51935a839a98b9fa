/**
 * The fields a lookup adds to custom_metadata's `github` object, within MAX_SHIPPED_METADATA_BYTES:
 * the lists shrink (newest kept) until they fit, the compare link last, and the counts stay exact
 * (or say that they are not: `pull_requests_complete: false` when commits were left unread).
 */
import type { Shipped } from './types.ts'

/** custom_metadata stays small enough to read and store: the lists give way, never the counts. */
export const MAX_SHIPPED_METADATA_BYTES = 32 * 1024
/** Commits listed, the newest; `commit_count` is always given in full. */
export const MAX_COMMITS = 50
/** An author longer than this is cut (GitHub logins are at most 39 characters). */
const MAX_AUTHOR_CHARS = 100

export function shippedMetadata(shipped: Shipped): Record<string, unknown> {
  let commits = shipped.commits.slice(-MAX_COMMITS).map(({ sha, message, author }) => ({
    sha,
    message,
    ...(author && { author: Array.from(author).slice(0, MAX_AUTHOR_CHARS).join('') })
  }))
  let pullRequests = shipped.pullRequests.map(({ number, title, url }) => ({
    number,
    ...(title && { title }),
    url
  }))
  let compareUrl = shipped.compareUrl
  for (;;) {
    const fields = {
      ...(shipped.previousSha && { previous_sha: shipped.previousSha }),
      ...(compareUrl && { compare_url: compareUrl }),
      ...(shipped.commitCount !== undefined && { commit_count: shipped.commitCount }),
      ...(commits.length > 0 && { commits }),
      ...(pullRequests.length > 0 && { pull_requests: pullRequests }),
      ...(shipped.pullRequestCount > pullRequests.length && {
        pull_request_count: shipped.pullRequestCount
      }),
      ...(!shipped.pullRequestsComplete &&
        shipped.commits.length > 0 && { pull_requests_complete: false }),
      ...(shipped.rollback && { rollback: true }),
      ...(shipped.runStartedAt && { run_started_at: shipped.runStartedAt })
    }
    if (Buffer.byteLength(JSON.stringify(fields)) <= MAX_SHIPPED_METADATA_BYTES) return fields
    // The longer list gives way first, by half (the newest kept); a compare link built from a
    // huge previous-version, last.
    if (commits.length > 0 && commits.length >= pullRequests.length) {
      commits = commits.slice(Math.ceil(commits.length / 2))
    } else if (pullRequests.length > 0) {
      pullRequests = pullRequests.slice(Math.ceil(pullRequests.length / 2))
    } else if (compareUrl) {
      compareUrl = undefined
    } else {
      return fields
    }
  }
}

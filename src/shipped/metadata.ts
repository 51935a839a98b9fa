/**
 * The fields a lookup adds to the `github` object of custom_metadata, within
 * MAX_SHIPPED_METADATA_BYTES: the lists shrink (newest kept) until they fit, and the counts stay
 * exact.
 */
import type { Shipped, ShippedCommit, ShippedPullRequest } from './types.ts'

/** custom_metadata stays small enough to read and store: the lists give way, never the counts. */
export const MAX_SHIPPED_METADATA_BYTES = 32 * 1024
/** An author longer than this is cut (GitHub logins are at most 39 characters). */
const MAX_AUTHOR_CHARS = 100

export function shippedMetadata(shipped: Shipped): Record<string, unknown> {
  const commits = shipped.commits.map(commitFields)
  const pullRequests = shipped.pullRequests.map(pullRequestFields)
  let commitsKept = commits.length
  let pullRequestsKept = pullRequests.length
  let withCompareUrl = true

  for (;;) {
    const fields = metadataFields(
      shipped,
      commits.slice(commits.length - commitsKept),
      pullRequests.slice(pullRequests.length - pullRequestsKept),
      withCompareUrl
    )
    if (Buffer.byteLength(JSON.stringify(fields)) <= MAX_SHIPPED_METADATA_BYTES) return fields
    // The longer list gives way first; a compare link built from a huge previous-version, last.
    if (commitsKept === 0 && pullRequestsKept === 0) {
      if (!withCompareUrl) return fields
      withCompareUrl = false
    } else if (commitsKept >= pullRequestsKept) {
      commitsKept = Math.floor(commitsKept / 2)
    } else {
      pullRequestsKept = Math.floor(pullRequestsKept / 2)
    }
  }
}

function metadataFields(
  shipped: Shipped,
  commits: Record<string, unknown>[],
  pullRequests: Record<string, unknown>[],
  withCompareUrl: boolean
): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  if (shipped.previousSha) fields.previous_sha = shipped.previousSha
  if (shipped.compareUrl && withCompareUrl) fields.compare_url = shipped.compareUrl
  if (shipped.commitCount !== undefined) fields.commit_count = shipped.commitCount
  if (commits.length > 0) fields.commits = commits
  if (pullRequests.length > 0) fields.pull_requests = pullRequests
  if (shipped.pullRequestCount > pullRequests.length) {
    fields.pull_request_count = shipped.pullRequestCount
  }
  if (shipped.rollback) fields.rollback = true
  if (shipped.runStartedAt) fields.run_started_at = shipped.runStartedAt
  return fields
}

function commitFields(commit: ShippedCommit): Record<string, unknown> {
  return {
    sha: commit.sha,
    message: commit.message,
    ...(commit.author
      ? { author: Array.from(commit.author).slice(0, MAX_AUTHOR_CHARS).join('') }
      : {})
  }
}

function pullRequestFields(pull: ShippedPullRequest): Record<string, unknown> {
  return { number: pull.number, ...(pull.title ? { title: pull.title } : {}), url: pull.url }
}

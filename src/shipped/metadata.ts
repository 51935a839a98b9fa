/**
 * The fields what shipped adds to custom_metadata (the lookup's, and the issues and risk read from
 * it), within MAX_SHIPPED_METADATA_BYTES: the lists shrink until they fit, the compare link last,
 * and the counts stay exact (or say that they are not: `pull_requests_complete: false` when
 * commits were left unread, `commits_complete: false` when the range itself is unknown).
 */
import type { Triage } from '../triage/triage.ts'
import type { Shipped } from './types.ts'

/** custom_metadata stays small enough to read and store: the lists give way, never the counts. */
export const MAX_SHIPPED_METADATA_BYTES = 32 * 1024
/** Commits listed, the newest; `commit_count` is always given in full. */
export const MAX_COMMITS = 50

export function shippedMetadata(
  shipped: Shipped | undefined,
  triage?: Triage
): Record<string, unknown> {
  const lists: Lists = {
    commits: (shipped?.commits ?? []).slice(-MAX_COMMITS).map(({ sha, message, author }) => ({
      sha,
      message,
      ...(author && { author })
    })),
    pull_requests: shipped?.pullRequests ?? [],
    issues: triage?.issues ?? [],
    closes: triage?.closes ?? [],
    risk: Object.entries(triage?.risk ?? {})
  }
  const issueCount = triage?.issueCount ?? lists.issues.length
  const closeCount = triage?.closeCount ?? lists.closes.length
  let compareUrl = shipped?.compareUrl
  for (;;) {
    const fields = {
      ...(shipped && lookupFields(shipped, compareUrl, lists.pull_requests.length)),
      ...(lists.commits.length > 0 && { commits: lists.commits }),
      ...(lists.pull_requests.length > 0 && { pull_requests: lists.pull_requests }),
      ...(lists.risk.length > 0 && { risk: Object.fromEntries(lists.risk) }),
      ...(triage && { risk_complete: triage.riskComplete }),
      ...(triage?.riskUnknown && { risk_unknown: triage.riskUnknown }),
      ...(lists.issues.length > 0 && { issues: lists.issues }),
      ...(triage?.issuesComplete === false && { issues_complete: false }),
      ...(lists.issues.length < issueCount && { issue_count: issueCount }),
      ...(lists.closes.length > 0 && { closes: lists.closes }),
      ...(lists.closes.length < closeCount && { close_count: closeCount })
    }
    if (bytesOf(fields) <= MAX_SHIPPED_METADATA_BYTES) return fields
    // The largest list gives way first, by half; a compare link (a huge previous-version's) last.
    if (!shrinkLargest(lists)) {
      if (!compareUrl) return fields
      compareUrl = undefined
    }
  }
}

type Lists = {
  commits: object[]
  pull_requests: object[]
  issues: string[]
  closes: string[]
  /** Each category with its paths: every category stays named, its paths give way. */
  risk: [string, string[]][]
}

/**
 * Halves the list that takes the most room, keeping its newest: the last commits and pull requests
 * (listed oldest first), the first issues and closed issues (listed newest first), and each risk
 * category's first paths. False when no list has anything left to give.
 */
function shrinkLargest(lists: Lists): boolean {
  const room = (name: keyof Lists): number =>
    name === 'risk'
      ? lists.risk.reduce((bytes, [, paths]) => bytes + bytesOf(paths) - 2, 0)
      : bytesOf(lists[name]) - 2
  const names = (Object.keys(lists) as (keyof Lists)[]).filter(name => room(name) > 0)
  if (names.length === 0) return false
  const largest = names.reduce((a, b) => (room(b) > room(a) ? b : a))
  if (largest === 'risk') lists.risk = lists.risk.map(([name, paths]) => [name, halve(paths)])
  else if (largest === 'issues' || largest === 'closes') lists[largest] = halve(lists[largest])
  else lists[largest] = lists[largest].slice(Math.ceil(lists[largest].length / 2))
  return true
}

/** The lookup's own facts, besides its lists. */
function lookupFields(
  shipped: Shipped,
  compareUrl: string | undefined,
  pullRequestsListed: number
): Record<string, unknown> {
  // The commit before a push is no previous deploy, and says so.
  const previous = shipped.source === 'previous-push' ? 'previous_push_sha' : 'previous_sha'
  return {
    ...(shipped.readFrom && { source: shipped.readFrom }),
    ...(shipped.previousSha && { [previous]: shipped.previousSha }),
    ...(compareUrl && { compare_url: compareUrl }),
    ...(shipped.commitCount !== undefined && { commit_count: shipped.commitCount }),
    ...(shipped.commitCount === undefined && !shipped.rollback && { commits_complete: false }),
    ...(shipped.pullRequestCount > pullRequestsListed && {
      pull_request_count: shipped.pullRequestCount
    }),
    ...(!shipped.pullRequestsComplete &&
      shipped.commits.length > 0 && { pull_requests_complete: false }),
    ...(shipped.rollback && { rollback: true }),
    ...(shipped.runStartedAt && { run_started_at: shipped.runStartedAt })
  }
}

function halve<T>(list: T[]): T[] {
  return list.slice(0, Math.floor(list.length / 2))
}

function bytesOf(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value))
}

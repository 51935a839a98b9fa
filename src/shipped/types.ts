/** What a change ships, as found by the lookup. Plain data: no behaviour here. */

/** How messages name and ask for the token, in the caller's words. */
export interface LookupAdvice {
  /** e.g. 'github-token' : used in "No github-token: ..." and "check the github-token input" */
  tokenInput: string
}

/** Which rule found the previous deploy. */
export type PreviousDeploySource =
  'input' | 'deployment' | 'release' | 'workflow-run' | 'push-payload'

export interface ShippedCommit {
  sha: string
  /** The first line of the commit message, whitespace collapsed. */
  message: string
  /** The author's GitHub login, or else the name in the commit. */
  author?: string
  /** When it was committed (ISO 8601, the committer's date), when known and valid: for lead time. */
  committedAt?: string
}

/** A file changed since the previous deploy; a rename names both of its paths, and counts once. */
export interface ChangedPath {
  path: string
  /** The path before a rename. */
  previousPath?: string
}

export interface ShippedPullRequest {
  number: number
  /** From GET /pulls/{number}, or from the squash or merge commit's message; unknown otherwise. */
  title?: string
  /** Built from the server URL, never taken from an answer. */
  url: string
}

export interface Shipped {
  /** The full SHA of the previous deploy. */
  previousSha?: string
  /** Which rule found it. */
  source?: PreviousDeploySource
  /** GitHub's compare view, built from the server URL. */
  compareUrl?: string
  /** Commits since the previous deploy; exact even when `commits` is capped. Unknown when absent. */
  commitCount?: number
  /** Oldest first; the newest MAX_COMMITS of the range. */
  commits: ShippedCommit[]
  /** Oldest first; the newest MAX_PULL_REQUESTS of those found. */
  pullRequests: ShippedPullRequest[]
  /** Pull requests found in the commits read (all of the range unless pages were skipped). */
  pullRequestCount: number
  /** The version deployed is older than the previous deploy (compare status `behind`). */
  rollback: boolean
  /** Files changed between the previous deploy and the version, each once. */
  changedFiles?: ChangedPath[]
  /** Whether changedFiles is the full list: false when unknown or cut by GitHub at 300 files. */
  changedFilesComplete: boolean
  /** When the current workflow run started (ISO 8601), when read. */
  runStartedAt?: string
  /** GitHub API calls made. */
  apiCalls: number
}

export function emptyShipped(): Shipped {
  return {
    commits: [],
    pullRequests: [],
    pullRequestCount: 0,
    rollback: false,
    changedFilesComplete: false,
    apiCalls: 0
  }
}

/** What the lookup is asked, and what a change ships as it found it. Plain data. */
import type { ChangedPath } from '../services/selection.ts'
import type { RiskUnknown } from '../triage/risk.ts'

/** The whole lookup's time: the change is sent when it runs out, so a slow API never holds a deploy. */
export const LOOKUP_BUDGET_MS = 10_000

/** How messages name the token's input, in the caller's words: e.g. 'github-token'. */
export interface LookupAdvice {
  tokenInput: string
}

export interface LookupOptions {
  /** '' means no token: only the push payload (and a previous-version SHA) can say anything. */
  token: string
  /** GITHUB_API_URL without a trailing "/": https://api.github.com, https://ghes.example.com/api/v3. */
  apiUrl: string
  /** GITHUB_SERVER_URL without a trailing "/", for links. */
  serverUrl: string
  /** "owner/repo" */
  repository: string
  eventName: string
  /** The event payload (untrusted shape). */
  payload: unknown
  /** GITHUB_RUN_ID, for the workflow-run rule. */
  runId?: string
  /** The commit being deployed. */
  version: string
  /** The previous-version setting: a SHA, a tag or a ref. */
  previousVersion?: string
  environment?: string
  /** Defaults to LOOKUP_BUDGET_MS. */
  budgetMs?: number
  /** Aborted when the run is cancelled: the lookup stops at once, with what it found. */
  signal?: AbortSignal
  advice: LookupAdvice
}

/** The options as the stages read them: the version trimmed, the repository as Octokit names it. */
export type LookupQuery = LookupOptions & { repo: { owner: string; repo: string } }

/** The rule that found the previous deploy: GitHub's API, or the checkout's own history. */
export type PreviousDeploySource =
  | 'input'
  | 'deployment'
  | 'release'
  | 'workflow-run'
  | 'push-payload'
  | 'previous-build'
  | 'previous-tag'
  | 'previous-push'

export interface ShippedCommit {
  sha: string
  /** The first line of the commit message, whitespace collapsed. */
  message: string
  /** The author's GitHub login, or else the name in the commit. */
  author?: string
  /** When it was committed (the committer's date), when given as a date: for lead time. */
  committedAt?: string
}

export interface ShippedPullRequest {
  number: number
  /** From GET /pulls/{number}, or from the squash or merge commit's message; unknown otherwise. */
  title?: string
  /** Built from the server URL, never taken from an answer; none for a host whose form is unknown. */
  url?: string
}

/** The host of the repository read from the checkout, and its page when the host's are known. */
export type Forge = { kind: 'github' | 'gitlab' | 'bitbucket' | 'gitea'; web?: string }

/** Each host's pages, from its repository's: the compare of FROM and TO, a pull request's (+ N). */
// prettier-ignore
export const FORGE_PAGES: Record<Forge['kind'], readonly [string, string]> = {
  github:    ['/compare/FROM...TO',          '/pull/'],
  gitlab:    ['/-/compare/FROM...TO',        '/-/merge_requests/'],
  // Bitbucket Cloud's compare page names the newer end first, then the older, apart by "%0D".
  bitbucket: ['/branches/compare/TO%0DFROM', '/pull-requests/'],
  gitea:     ['/compare/FROM...TO',          '/pulls/']
}

/** The host's compare view of two commits, tags or branches (each encoded), on a known page. */
export const compareUrl = ({ web, kind }: Forge, from: string, to: string): string | undefined =>
  web &&
  web +
    FORGE_PAGES[kind][0].replace(/FROM|TO/g, end => encodeURIComponent(end === 'FROM' ? from : to))

export interface Shipped {
  /** Where it was read: the checkout's history with git; a forge's API when absent. */
  readFrom?: 'git'
  /** The full SHA of the previous deploy, and which rule found it. */
  previousSha?: string
  source?: PreviousDeploySource
  /** The host's compare view, built from the server URL (or the origin remote's known host). */
  compareUrl?: string
  /** Commits since the previous deploy; exact even when some were left unread. Unknown when absent. */
  commitCount?: number
  /** Every commit read, oldest first: the whole range when pullRequestsComplete. */
  commits: ShippedCommit[]
  /** Each commit's message as read, its first 2,000 characters (for references in its body). */
  messages: string[]
  /** False when a message was longer than what is read of it: the issues found are a part. */
  messagesComplete?: false
  /** Oldest first; the newest MAX_PULL_REQUESTS of the pullRequestCount found in the commits read. */
  pullRequests: ShippedPullRequest[]
  pullRequestCount: number
  /** Every commit of the range was read, so pullRequestCount is exact. */
  pullRequestsComplete: boolean
  /** The version deployed is older than the previous deploy (compare status `behind`). */
  rollback: boolean
  /** Files changed between the previous deploy and the version, each once. */
  changedFiles?: ChangedPath[]
  /** Whether changedFiles is the full list: false when unknown, cut or past a bound. */
  changedFilesComplete: boolean
  /** Each commit's paths, by its SHA, when the lookup could read them all. */
  touched?: Record<string, string[]>
  /** Why no changed path could be read, when that is no failure (no previous deploy, say). */
  pathsUnknown?: RiskUnknown
  forge?: Forge
  /** When the current workflow run started (ISO 8601), when read. */
  runStartedAt?: string
  /** Calls made to the forge's API, GitHub's or GitLab's. */
  apiCalls: number
}

export function emptyShipped(): Shipped {
  return {
    commits: [],
    messages: [],
    pullRequests: [],
    pullRequestCount: 0,
    pullRequestsComplete: false,
    rollback: false,
    changedFilesComplete: false,
    apiCalls: 0
  }
}

/** The previous deploy, as a rule found it. */
export interface PreviousDeploy {
  /** What to compare from: a full SHA, or a tag or branch the compare resolves. */
  ref: string
  /** The full SHA, when known before the compare. */
  sha?: string
  source: PreviousDeploySource
}

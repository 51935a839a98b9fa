/**
 * What a change ships: the previous deploy, the commits and pull requests since, the
 * compare link and whether it is a rollback. Never in the way: it never throws, makes at most
 * MAX_API_CALLS calls, returns when its time budget runs out, and turns any failure into one
 * warning line while keeping whatever it found.
 */
import { ApiError, type ApiFailure } from './api-failure.ts'
import { compareCommits, isRollback } from './compare.ts'
import { GitHubClient, LOOKUP_BUDGET_MS } from './github-client.ts'
import { findPreviousDeploy, type PreviousDeploy } from './previous-deploy.ts'
import { MAX_PULL_REQUESTS, pullRequestsInMessages, readMissingTitles } from './pull-requests.ts'
import { shippedFromPushPayload } from './push-payload.ts'
import { emptyShipped, type LookupAdvice, type Shipped } from './types.ts'
import { isFullSha } from './untrusted.ts'
import { lookupWarning, noTokenWarning } from './warning.ts'

export { LOOKUP_BUDGET_MS }
export type { LookupAdvice }

export interface LookupOptions {
  /** '' means no token: only the push payload (and a previous-version SHA) can say anything, and no API call is made. */
  token: string
  /** GITHUB_API_URL, e.g. https://api.github.com or https://ghes.example.com/api/v3. */
  apiUrl: string
  /** GITHUB_SERVER_URL, for links. */
  serverUrl: string
  /** "owner/repo" */
  repository: string
  eventName: string
  /** The event payload (untrusted shape). */
  payload: unknown
  /** The workflow run's id (GITHUB_RUN_ID), for the workflow-run rule. */
  runId?: string
  /** The commit being deployed. */
  version: string
  /** The previous-version input. */
  previousVersion?: string
  /** The change's environment. */
  environment?: string
  /** Defaults to LOOKUP_BUDGET_MS. */
  budgetMs?: number
  /** How messages name and ask for the token, in the caller's words. */
  advice: LookupAdvice
}

export interface LookupResult {
  shipped: Shipped
  /** One line, when something could not be looked up. */
  warning?: string
}

const REPOSITORY = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/

export async function lookUpShipped(options: LookupOptions): Promise<LookupResult> {
  const shipped = emptyShipped()
  try {
    return await lookUp(options, shipped)
  } catch {
    // Unreachable by design; a deploy must never fail for want of a commit list.
    return { shipped, warning: 'Could not look up what this change ships: an unexpected error.' }
  }
}

async function lookUp(options: LookupOptions, shipped: Shipped): Promise<LookupResult> {
  const version = options.version.trim()
  if (!REPOSITORY.test(options.repository) || !version) {
    return {
      shipped,
      warning: `Could not look up what this change ships: the repository ("owner/repo") or the version is unknown.`
    }
  }
  const repositoryUrl = `${options.serverUrl.replace(/\/+$/, '')}/${options.repository}`

  if (!options.token) {
    const fromPayload = applyPushPayload(options, shipped, repositoryUrl)
    if (!fromPayload) applyPreviousInput(options, shipped, repositoryUrl)
    return { shipped, warning: noTokenWarning(fromPayload, options.advice) }
  }

  const failures: ApiFailure[] = []
  let client: GitHubClient
  try {
    client = new GitHubClient({
      apiUrl: options.apiUrl,
      token: options.token,
      budgetMs: options.budgetMs
    })
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    return finish(options, shipped, repositoryUrl, [error.failure])
  }
  try {
    await lookUpWithApi(client, options, shipped, repositoryUrl, failures)
  } finally {
    shipped.apiCalls = client.calls
    client.close()
  }
  return finish(options, shipped, repositoryUrl, failures)
}

async function lookUpWithApi(
  client: GitHubClient,
  options: LookupOptions,
  shipped: Shipped,
  repositoryUrl: string,
  failures: ApiFailure[]
): Promise<void> {
  const [owner, repo] = options.repository.split('/')
  const search = await findPreviousDeploy(client, {
    owner,
    repo,
    eventName: options.eventName,
    payload: options.payload,
    runId: options.runId,
    version: options.version.trim(),
    previousVersion: options.previousVersion,
    environment: options.environment
  })
  failures.push(...search.failures)
  if (search.runStartedAt) shipped.runStartedAt = search.runStartedAt
  const previous = search.previous
  if (!previous || search.stopped) return
  setPrevious(shipped, previous, repositoryUrl, options.version.trim())

  if (previous.sha && previous.sha === options.version.trim().toLowerCase()) {
    // The same commit again: nothing new, and no call needed to say so.
    shipped.commitCount = 0
    shipped.changedFiles = []
    shipped.changedFilesComplete = true
    return
  }

  let result
  try {
    result = await compareCommits(client, {
      owner,
      repo,
      base: previous.ref,
      head: options.version.trim()
    })
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    if (error.failure.type !== 'call-limit') failures.push(error.failure)
    return
  }
  if (result.baseSha)
    setPrevious(
      shipped,
      { ...previous, sha: result.baseSha },
      repositoryUrl,
      options.version.trim()
    )
  if (result.totalCommits !== undefined) shipped.commitCount = result.totalCommits
  shipped.commits = result.commits
  shipped.rollback = isRollback(result)
  if (result.files) shipped.changedFiles = result.files
  shipped.changedFilesComplete = result.filesComplete
  const pullRequests = pullRequestsInMessages(result.messages, repositoryUrl)
  shipped.pullRequestCount = pullRequests.length
  shipped.pullRequests = pullRequests.slice(-MAX_PULL_REQUESTS)
  if (result.failure) {
    // A later page failed: its titles would most likely fail too, and the warning says why.
    failures.push(result.failure)
    return
  }
  failures.push(...(await readMissingTitles(client, { owner, repo }, shipped.pullRequests)))
}

/** The previous deploy and its compare link. */
function setPrevious(
  shipped: Shipped,
  previous: PreviousDeploy,
  repositoryUrl: string,
  version: string
): void {
  shipped.source = previous.source
  if (previous.sha) shipped.previousSha = previous.sha
  const base = previous.sha ?? previous.ref
  shipped.compareUrl = `${repositoryUrl}/compare/${encodeURIComponent(base)}...${encodeURIComponent(version)}`
}

/** With no token, a previous-version SHA still gives the previous deploy and the compare link. */
function applyPreviousInput(options: LookupOptions, shipped: Shipped, repositoryUrl: string): void {
  const previous = options.previousVersion?.trim()
  if (!isFullSha(previous)) return
  setPrevious(
    shipped,
    { ref: previous, sha: previous.toLowerCase(), source: 'input' },
    repositoryUrl,
    options.version.trim()
  )
}

/** The push payload's account; true when it described the push. Replaces anything partial the API gave. */
function applyPushPayload(
  options: LookupOptions,
  shipped: Shipped,
  repositoryUrl: string
): boolean {
  const version = options.version.trim()
  const push = shippedFromPushPayload(options.eventName, options.payload, version)
  if (!push) return false
  setPrevious(
    shipped,
    { ref: push.previousSha, sha: push.previousSha, source: 'push-payload' },
    repositoryUrl,
    version
  )
  if (push.commitCount !== undefined) shipped.commitCount = push.commitCount
  else delete shipped.commitCount
  shipped.commits = push.commits
  shipped.rollback = false
  if (push.changedFiles) shipped.changedFiles = push.changedFiles
  else delete shipped.changedFiles
  shipped.changedFilesComplete = push.changedFilesComplete
  const pullRequests = pullRequestsInMessages(push.messages, repositoryUrl)
  shipped.pullRequestCount = pullRequests.length
  shipped.pullRequests = pullRequests.slice(-MAX_PULL_REQUESTS)
  return true
}

/** Falls back to the push payload when the API left the commits unknown, and words the warning. */
function finish(
  options: LookupOptions,
  shipped: Shipped,
  repositoryUrl: string,
  failures: ApiFailure[]
): LookupResult {
  const reported = failures.filter(failure => failure.type !== 'call-limit')
  let fromPushPayload = false
  if (reported.length > 0 && shipped.commitCount === undefined) {
    fromPushPayload = applyPushPayload(options, shipped, repositoryUrl)
  }
  const warning = lookupWarning(
    reported,
    { commitsKnown: shipped.commitCount !== undefined, fromPushPayload },
    options.advice
  )
  return warning ? { shipped, warning } : { shipped }
}

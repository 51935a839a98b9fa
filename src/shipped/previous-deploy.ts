/**
 * The previous deploy, by the first rule that finds one (issue 10):
 * 1. the previous-version input;
 * 2. with an environment, the newest earlier deployment to it whose latest status is a success;
 * 3. on release events, the previous published release;
 * 4. otherwise the newest earlier successful run of the same workflow on the same branch.
 * (Rule 5, the push payload, needs no API call: push-payload.ts.)
 * A rule that is refused (403, 404, an odd answer) passes to the next; a failure that would refuse
 * every call (401, rate limit, time budget, network) ends the search.
 */
import { ApiError, type ApiFailure, type GitHubApi } from './github-api.ts'
import { arrayAt, integerAt, isFullSha, stringAt, timestampAt } from './json-shape.ts'
import type { PreviousDeploySource } from './types.ts'

/** Deployments listed in one call; the ones of this version and this run's own are skipped. */
export const MAX_DEPLOYMENTS_LISTED = 10
/** Deployments whose statuses are read (one call each). */
export const MAX_DEPLOYMENT_CANDIDATES = 2
/** Releases listed in one call (newest first). */
export const MAX_RELEASES_LISTED = 10
/** Successful runs of the workflow listed in one call (newest first). */
export const MAX_RUNS_LISTED = 10
/** Calls kept for the compare, which makes a previous deploy worth finding. */
const CALLS_KEPT_FOR_COMPARE = 1

export interface PreviousDeploy {
  /** What to compare from: a full SHA, or a tag or branch the compare resolves. */
  ref: string
  /** The full SHA, when known before the compare. */
  sha?: string
  source: PreviousDeploySource
}

export interface PreviousDeployQuery {
  /** "repos/{owner}/{repo}" */
  repositoryPath: string
  eventName: string
  payload: unknown
  env: Record<string, string | undefined>
  version: string
  previousVersion?: string
  environment?: string
}

export interface PreviousDeploySearch {
  previous?: PreviousDeploy
  runStartedAt?: string
  failures: ApiFailure[]
  /** A failure that refuses every later call happened: do not call again. */
  stopped: boolean
}

/** Deployment states that mean it succeeded: GitHub marks a succeeded deployment inactive once a newer one succeeds. */
const SUCCEEDED_STATES = new Set(['success', 'inactive'])

export async function findPreviousDeploy(
  api: GitHubApi,
  query: PreviousDeployQuery
): Promise<PreviousDeploySearch> {
  const search: PreviousDeploySearch = { failures: [], stopped: false }
  const previousVersion = query.previousVersion?.trim()
  if (previousVersion) {
    search.previous = {
      ref: previousVersion,
      ...(isFullSha(previousVersion) ? { sha: previousVersion.toLowerCase() } : {}),
      source: 'input'
    }
    return search
  }

  const rules: (() => Promise<PreviousDeploy | undefined>)[] = []
  if (query.environment) rules.push(() => fromDeployments(api, query))
  if (query.eventName === 'release') rules.push(() => fromReleases(api, query))
  rules.push(async () => {
    const found = await fromWorkflowRuns(api, query)
    search.runStartedAt = found.runStartedAt
    return found.previous
  })

  for (const rule of rules) {
    try {
      const previous = await rule()
      if (previous) {
        search.previous = previous
        break
      }
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.failure.type !== 'call-limit') search.failures.push(error.failure)
      if (endsSearch(error.failure)) {
        search.stopped = true
        break
      }
    }
  }
  return search
}

/** Failures after which every other call would fail too. */
export function endsSearch(failure: ApiFailure): boolean {
  switch (failure.type) {
    case 'status':
      return failure.status === 401 || failure.rateLimited
    case 'shape':
      return false
    default:
      return true
  }
}

/** Whether a call may be made without taking the compare's call. */
function mayCall(api: GitHubApi, calls = 1): boolean {
  return api.remainingCalls - calls >= CALLS_KEPT_FOR_COMPARE
}

/** Whether both times are known and the first is not earlier than the second. */
function notBefore(time: string | undefined, reference: string | undefined): boolean {
  return time !== undefined && reference !== undefined && Date.parse(time) >= Date.parse(reference)
}

function sameSha(a: string | undefined, b: string): boolean {
  return a !== undefined && a.toLowerCase() === b.toLowerCase()
}

async function fromDeployments(
  api: GitHubApi,
  query: PreviousDeployQuery
): Promise<PreviousDeploy | undefined> {
  if (!mayCall(api, 2)) return undefined
  const path = `${query.repositoryPath}/deployments`
  const { body } = await api.get(path, {
    environment: query.environment ?? '',
    per_page: MAX_DEPLOYMENTS_LISTED
  })
  const deployments = arrayAt(body)
  if (!deployments) {
    throw new ApiError({ type: 'shape', call: api.callName(api.url(path)), what: 'not a list' })
  }
  // This run's own deployment (a deployment event's, or the one GitHub made for the job, which
  // has this version) is not a previous one; neither is a redeploy of the same version.
  const currentId = integerAt(query.payload, 'deployment', 'id')
  const currentCreatedAt = timestampAt(query.payload, 'deployment', 'created_at')
  const candidates = deployments
    .filter(deployment => {
      const id = integerAt(deployment, 'id')
      const sha = stringAt(deployment, 'sha')
      const createdAt = timestampAt(deployment, 'created_at')
      return (
        id !== undefined &&
        id !== currentId &&
        isFullSha(sha) &&
        !sameSha(sha, query.version) &&
        !notBefore(createdAt, currentCreatedAt)
      )
    })
    .slice(0, MAX_DEPLOYMENT_CANDIDATES)

  for (const deployment of candidates) {
    if (!mayCall(api)) return undefined
    const id = integerAt(deployment, 'id') as number
    const statuses = await api.get(`${path}/${id}/statuses`, { per_page: 1 })
    const state = stringAt(arrayAt(statuses.body)?.[0], 'state')
    if (state && SUCCEEDED_STATES.has(state)) {
      const sha = (stringAt(deployment, 'sha') as string).toLowerCase()
      return { ref: sha, sha, source: 'deployment' }
    }
  }
  return undefined
}

async function fromReleases(
  api: GitHubApi,
  query: PreviousDeployQuery
): Promise<PreviousDeploy | undefined> {
  if (!mayCall(api)) return undefined
  const path = `${query.repositoryPath}/releases`
  const { body } = await api.get(path, { per_page: MAX_RELEASES_LISTED })
  const releases = arrayAt(body)
  if (!releases) {
    throw new ApiError({ type: 'shape', call: api.callName(api.url(path)), what: 'not a list' })
  }
  const currentId = integerAt(query.payload, 'release', 'id')
  const currentTag = stringAt(query.payload, 'release', 'tag_name')
  const currentPublished =
    timestampAt(query.payload, 'release', 'published_at') ??
    timestampAt(query.payload, 'release', 'created_at')
  const previous = releases.find(release => {
    const tag = stringAt(release, 'tag_name')
    const published = timestampAt(release, 'published_at')
    return (
      tag !== undefined &&
      release !== null &&
      (release as { draft?: unknown }).draft !== true &&
      published !== undefined &&
      integerAt(release, 'id') !== currentId &&
      tag !== currentTag &&
      !notBefore(published, currentPublished)
    )
  })
  const tag = stringAt(previous, 'tag_name')
  return tag ? { ref: tag, source: 'release' } : undefined
}

async function fromWorkflowRuns(
  api: GitHubApi,
  query: PreviousDeployQuery
): Promise<{ previous?: PreviousDeploy; runStartedAt?: string }> {
  const runId = query.env.GITHUB_RUN_ID
  if (!runId || !/^\d{1,20}$/.test(runId) || !mayCall(api, 2)) return {}
  const runPath = `${query.repositoryPath}/actions/runs/${runId}`
  const { body: run } = await api.get(runPath)
  const workflowId = integerAt(run, 'workflow_id')
  const branch = stringAt(run, 'head_branch')
  const runStartedAt = timestampAt(run, 'run_started_at')
  const createdAt = timestampAt(run, 'created_at') ?? runStartedAt
  if (workflowId === undefined) {
    throw new ApiError({
      type: 'shape',
      call: api.callName(api.url(runPath)),
      what: 'no workflow_id'
    })
  }
  if (!branch) return { runStartedAt }

  const runsPath = `${query.repositoryPath}/actions/workflows/${workflowId}/runs`
  const { body } = await api.get(runsPath, {
    branch,
    status: 'success',
    per_page: MAX_RUNS_LISTED
  })
  const runs = arrayAt(body, 'workflow_runs')
  if (!runs) {
    throw new ApiError({
      type: 'shape',
      call: api.callName(api.url(runsPath)),
      what: 'no workflow_runs'
    })
  }
  // A re-run of this version is not a previous deploy of something else.
  const previous = runs.find(candidate => {
    const sha = stringAt(candidate, 'head_sha')
    const started = timestampAt(candidate, 'created_at')
    return (
      String(integerAt(candidate, 'id')) !== runId &&
      isFullSha(sha) &&
      !sameSha(sha, query.version) &&
      !notBefore(started, createdAt)
    )
  })
  const sha = stringAt(previous, 'head_sha')?.toLowerCase()
  return {
    ...(sha ? { previous: { ref: sha, sha, source: 'workflow-run' as const } } : {}),
    ...(runStartedAt ? { runStartedAt } : {})
  }
}

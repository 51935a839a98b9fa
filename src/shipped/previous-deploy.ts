/**
 * The previous deploy, by the first rule that finds one:
 * 1. the previous-version input;
 * 2. with an environment, the newest earlier deployment to it whose latest status is a success;
 * 3. on release events, the previous published release;
 * 4. otherwise the newest earlier successful run of the same workflow on the same branch.
 * (The push payload, the last resort, needs no API call: push-payload.ts.)
 * A rule that is refused (403, 404, an odd answer) passes to the next; a failure that would refuse
 * every call (401, rate limit, time budget, network) ends the search.
 */
import { ApiError, endsSearch, type ApiFailure } from './api-failure.ts'
import type { GitHubClient } from './github-client.ts'
import type { PreviousDeploySource } from './types.ts'
import { countOf, isFullSha, listOf, textOf, timestampOf, untrusted } from './untrusted.ts'

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
  owner: string
  repo: string
  eventName: string
  payload: unknown
  /** The workflow run's id (GITHUB_RUN_ID), for the workflow-run rule. */
  runId?: string
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

/** The fields of a deployment or release event's payload that are read. */
interface EventPayload {
  deployment: { id: number; created_at: string }
  release: { id: number; tag_name: string; published_at: string; created_at: string }
}

/** Deployment states that mean it succeeded: GitHub marks a succeeded deployment inactive once a newer one succeeds. */
const SUCCEEDED_STATES = new Set(['success', 'inactive'])

export async function findPreviousDeploy(
  client: GitHubClient,
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
  if (query.environment) rules.push(() => fromDeployments(client, query))
  if (query.eventName === 'release') rules.push(() => fromReleases(client, query))
  rules.push(async () => {
    const found = await fromWorkflowRuns(client, query)
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

/** Whether a call may be made without taking the compare's call. */
function mayCall(client: GitHubClient, calls = 1): boolean {
  return client.remainingCalls - calls >= CALLS_KEPT_FOR_COMPARE
}

/** Whether both times are known and the first is not earlier than the second. */
function notBefore(time: string | undefined, reference: string | undefined): boolean {
  return time !== undefined && reference !== undefined && Date.parse(time) >= Date.parse(reference)
}

function sameSha(a: string | undefined, b: string): boolean {
  return a !== undefined && a.toLowerCase() === b.toLowerCase()
}

async function fromDeployments(
  client: GitHubClient,
  query: PreviousDeployQuery
): Promise<PreviousDeploy | undefined> {
  if (!mayCall(client, 2)) return undefined
  const { owner, repo } = query
  const { data } = await client.call(octokit =>
    octokit.rest.repos.listDeployments({
      owner,
      repo,
      environment: query.environment ?? '',
      per_page: MAX_DEPLOYMENTS_LISTED
    })
  )
  const deployments = listOf(data)
  if (!deployments) {
    throw new ApiError({
      type: 'shape',
      call: client.pathCallName(`repos/${owner}/${repo}/deployments`),
      what: 'not a list'
    })
  }
  // This run's own deployment (a deployment event's, or the one GitHub made for the job, which
  // has this version) is not a previous one; neither is a redeploy of the same version.
  const event = untrusted<EventPayload>(query.payload)
  const currentId = countOf(event?.deployment?.id)
  const currentCreatedAt = timestampOf(event?.deployment?.created_at)
  const candidates = deployments.flatMap(deployment => {
    const id = countOf(deployment?.id)
    const sha = deployment?.sha
    const createdAt = timestampOf(deployment?.created_at)
    return id !== undefined &&
      id !== currentId &&
      isFullSha(sha) &&
      !sameSha(sha, query.version) &&
      !notBefore(createdAt, currentCreatedAt)
      ? [{ id, sha: sha.toLowerCase() }]
      : []
  })

  for (const deployment of candidates.slice(0, MAX_DEPLOYMENT_CANDIDATES)) {
    if (!mayCall(client)) return undefined
    const statuses = await client.call(octokit =>
      octokit.rest.repos.listDeploymentStatuses({
        owner,
        repo,
        deployment_id: deployment.id,
        per_page: 1
      })
    )
    const state = textOf(listOf(statuses.data)?.[0]?.state)
    if (state && SUCCEEDED_STATES.has(state)) {
      return { ref: deployment.sha, sha: deployment.sha, source: 'deployment' }
    }
  }
  return undefined
}

async function fromReleases(
  client: GitHubClient,
  query: PreviousDeployQuery
): Promise<PreviousDeploy | undefined> {
  if (!mayCall(client)) return undefined
  const { owner, repo } = query
  const { data } = await client.call(octokit =>
    octokit.rest.repos.listReleases({ owner, repo, per_page: MAX_RELEASES_LISTED })
  )
  const releases = listOf(data)
  if (!releases) {
    throw new ApiError({
      type: 'shape',
      call: client.pathCallName(`repos/${owner}/${repo}/releases`),
      what: 'not a list'
    })
  }
  const current = untrusted<EventPayload>(query.payload)?.release
  const currentId = countOf(current?.id)
  const currentTag = textOf(current?.tag_name)
  const currentPublished = timestampOf(current?.published_at) ?? timestampOf(current?.created_at)
  const previous = releases.find(release => {
    const tag = textOf(release?.tag_name)
    const published = timestampOf(release?.published_at)
    return (
      tag !== undefined &&
      release?.draft !== true &&
      published !== undefined &&
      countOf(release?.id) !== currentId &&
      tag !== currentTag &&
      !notBefore(published, currentPublished)
    )
  })
  const tag = textOf(previous?.tag_name)
  return tag ? { ref: tag, source: 'release' } : undefined
}

async function fromWorkflowRuns(
  client: GitHubClient,
  query: PreviousDeployQuery
): Promise<{ previous?: PreviousDeploy; runStartedAt?: string }> {
  const runId = query.runId?.trim()
  const runNumber = countOf(Number(runId))
  if (!runId || !/^\d{1,20}$/.test(runId) || runNumber === undefined || !mayCall(client, 2)) {
    return {}
  }
  const { owner, repo } = query
  const { data: run } = await client.call(octokit =>
    octokit.rest.actions.getWorkflowRun({ owner, repo, run_id: runNumber })
  )
  const workflowId = countOf(run?.workflow_id)
  const branch = textOf(run?.head_branch)
  const runStartedAt = timestampOf(run?.run_started_at)
  const createdAt = timestampOf(run?.created_at) ?? runStartedAt
  if (workflowId === undefined) {
    throw new ApiError({
      type: 'shape',
      call: client.pathCallName(`repos/${owner}/${repo}/actions/runs/${runId}`),
      what: 'no workflow_id'
    })
  }
  if (!branch) return { runStartedAt }

  const { data } = await client.call(octokit =>
    octokit.rest.actions.listWorkflowRuns({
      owner,
      repo,
      workflow_id: workflowId,
      branch,
      status: 'success',
      per_page: MAX_RUNS_LISTED
    })
  )
  const runs = listOf(data?.workflow_runs)
  if (!runs) {
    throw new ApiError({
      type: 'shape',
      call: client.pathCallName(`repos/${owner}/${repo}/actions/workflows/${workflowId}/runs`),
      what: 'no workflow_runs'
    })
  }
  // A re-run of this version is not a previous deploy of something else.
  const previous = runs.find(candidate => {
    const sha = candidate?.head_sha
    const started = timestampOf(candidate?.created_at)
    return (
      String(countOf(candidate?.id)) !== runId &&
      isFullSha(sha) &&
      !sameSha(sha, query.version) &&
      !notBefore(started, createdAt)
    )
  })
  const sha = textOf(previous?.head_sha)?.toLowerCase()
  return {
    ...(sha ? { previous: { ref: sha, sha, source: 'workflow-run' as const } } : {}),
    ...(runStartedAt ? { runStartedAt } : {})
  }
}

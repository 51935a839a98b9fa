/**
 * The previous deploy, by the first rule that finds one: the previous-version input; with an
 * environment, the newest earlier deployment to it whose latest status is a success; on release
 * events, the previous published release; else the newest earlier successful run of the same
 * workflow on the same branch. (The push payload, the last resort, needs no call.) A refused rule
 * (403, 404) passes to the next; a failure that would refuse every call ends the search.
 */
import { isFullSha } from './compare.ts'
import type { GitHub } from './github-client.ts'
import type { LookupQuery, PreviousDeploy } from './types.ts'
import { failureIn, LookupError } from './warning.ts'

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
/** A succeeded deployment's states: GitHub marks it inactive once a newer one succeeds. */
const SUCCEEDED_STATES = new Set(['success', 'inactive'])

type PreviousFound = { previous?: PreviousDeploy; runStartedAt?: string }
/** A deployment or release event's payload, as far as it is read (untrusted shape). */
type Event = { deployment?: Record<string, unknown>; release?: Record<string, unknown> } | null

export async function findPreviousDeploy(
  github: GitHub,
  query: LookupQuery
): Promise<PreviousFound & { failures: LookupError[] }> {
  const input = previousVersionInput(query.previousVersion)
  if (input) return { previous: input, failures: [] }
  const rules = [
    ...(query.environment ? [fromDeployments] : []),
    ...(query.eventName === 'release' ? [fromReleases] : []),
    fromWorkflowRuns
  ]
  const failures: LookupError[] = []
  for (const rule of rules) {
    const found = await rule(github, query).catch(failureIn)
    if (found instanceof LookupError) {
      failures.push(found)
      if (found.final) break
    } else if (found.previous || rule === fromWorkflowRuns) return { ...found, failures }
  }
  return { failures }
}

/** The previous-version input, trimmed, with its SHA when it is a full one. */
export function previousVersionInput(input: string | undefined): PreviousDeploy | undefined {
  const ref = input?.trim()
  const sha = isFullSha(ref) ? { sha: ref.toLowerCase() } : {}
  return ref ? { ref, ...sha, source: 'input' } : undefined
}

/** Whether `calls` may be made without taking the compare's call. */
function mayCall(github: GitHub, calls: number): boolean {
  return github.callsLeft() - calls >= CALLS_KEPT_FOR_COMPARE
}

/** Whether both are times and the first is not earlier than the second. */
function notBefore(time: unknown, reference: unknown): boolean {
  return Date.parse(String(time)) >= Date.parse(String(reference))
}

async function fromDeployments(github: GitHub, query: LookupQuery): Promise<PreviousFound> {
  if (!mayCall(github, 2)) return {}
  const { repos } = github.octokit.rest
  const { environment, repo } = query
  const version = query.version.toLowerCase()
  const per_page = MAX_DEPLOYMENTS_LISTED
  const { data: deployments } = await repos.listDeployments({ ...repo, environment, per_page })
  // This run's own deployment (a deployment event's, or the one GitHub made for the job, which
  // has this version) is not a previous one; neither is a redeploy of the same version.
  const current = (query.payload as Event)?.deployment
  const candidates = deployments.filter(
    ({ id, sha, created_at }) =>
      id !== current?.id &&
      sha.toLowerCase() !== version &&
      !notBefore(created_at, current?.created_at)
  )
  for (const { id, sha } of candidates.slice(0, MAX_DEPLOYMENT_CANDIDATES)) {
    if (!mayCall(github, 1)) return {}
    const { data } = await repos.listDeploymentStatuses({ ...repo, deployment_id: id, per_page: 1 })
    if (SUCCEEDED_STATES.has(data[0]?.state ?? '')) {
      const previous = sha.toLowerCase()
      return { previous: { ref: previous, sha: previous, source: 'deployment' } }
    }
  }
  return {}
}

async function fromReleases(github: GitHub, query: LookupQuery): Promise<PreviousFound> {
  if (!mayCall(github, 1)) return {}
  const { repos } = github.octokit.rest
  const { data } = await repos.listReleases({ ...query.repo, per_page: MAX_RELEASES_LISTED })
  const current = (query.payload as Event)?.release
  const previous = data.find(
    release =>
      !release.draft &&
      release.published_at !== null &&
      release.id !== current?.id &&
      release.tag_name !== current?.tag_name &&
      !notBefore(release.published_at, current?.published_at ?? current?.created_at)
  )
  return previous ? { previous: { ref: previous.tag_name, source: 'release' } } : {}
}

async function fromWorkflowRuns(github: GitHub, query: LookupQuery): Promise<PreviousFound> {
  const runId = query.runId?.trim() ?? ''
  if (!/^\d{1,15}$/.test(runId) || !mayCall(github, 2)) return {}
  const { actions } = github.octokit.rest
  const { data: run } = await actions.getWorkflowRun({ ...query.repo, run_id: Number(runId) })
  const started = run.run_started_at ? { runStartedAt: run.run_started_at } : {}
  if (!run.head_branch) return started
  const { workflow_id, head_branch: branch } = run
  const { data } = await actions.listWorkflowRuns({
    ...query.repo,
    workflow_id,
    branch,
    status: 'success',
    per_page: MAX_RUNS_LISTED
  })
  // A re-run of this version is not a previous deploy of something else.
  const previous = data.workflow_runs.find(
    ({ id, head_sha, created_at }) =>
      String(id) !== runId &&
      head_sha.toLowerCase() !== query.version.toLowerCase() &&
      !notBefore(created_at, run.created_at)
  )
  const sha = previous?.head_sha.toLowerCase()
  return sha ? { previous: { ref: sha, sha, source: 'workflow-run' }, ...started } : started
}

/**
 * The run's context -> the change's defaults as plain data (RunDefaults). Pure: it reads only the
 * context it is given, and never throws on a payload of an unexpected shape (events evolve).
 */
import { withoutUndefined, type RunDefaults } from '../change.ts'
import { outcomeOf, type EventOutcome } from '../deploy.ts'
import { oneLine, shortSha } from '../describe.ts'
import type { RunContext } from './run-context.ts'

const PULL_REQUEST_EVENTS = new Set(['pull_request', 'pull_request_target'])
const DEPLOYMENT_EVENTS = new Set(['deployment', 'deployment_status'])

/** `cwd` is where a relative path is read from when the runner names no workspace. */
export function contextDefaults(run: RunContext, cwd: string): RunDefaults {
  const version = resolveVersion(run)
  const outcome = eventOutcome(run.eventName, run.payload)
  const url = runUrl(run)
  const attempt = run.runAttempt && run.runAttempt !== '1' ? ` attempt ${run.runAttempt}` : ''
  const ref = headRef(run)
  // Where issue keys and hotfixes are named: the pushed branch, or the pull request's head.
  const shipsBranch = run.eventName === 'push' || PULL_REQUEST_EVENTS.has(run.eventName)
  return withoutUndefined({
    service: run.repository,
    version,
    user: run.actor,
    environment: deploymentEnvironment(run.eventName, run.payload) ?? run.jobEnvironment,
    eventDescription: describeEvent(run, version, outcome),
    outcome,
    deletedRef:
      (run.eventName === 'push' && valueAt(run.payload, ['deleted']) === true) || undefined,
    branch: shipsBranch && ref?.type === 'branch' ? ref.name : undefined,
    metadata: {
      key: 'github',
      fields: withoutUndefined({
        repository: run.repository,
        sha: version,
        ref: run.ref,
        event_name: run.eventName || undefined,
        workflow: run.workflow,
        job: run.job,
        run_id: run.runId,
        run_number: run.runNumber,
        run_attempt: run.runAttempt,
        run_url: url,
        actor: run.actor,
        pull_request: pullRequestNumber(run.eventName, run.payload)
      })
    },
    links: run.repository ? { serverUrl: run.serverUrl, repository: run.repository } : undefined,
    // "Run 42", or "Run 42 attempt 2" after a re-run.
    runLink: url ? { text: `Run ${run.runNumber ?? run.runId}${attempt}`, url } : undefined,
    workspace: run.workspace ?? cwd,
    // Where the run comes from: GitHub names no job's own id or page.
    pipeline: withoutUndefined({
      repositoryUrl: run.repository && `${run.serverUrl}/${run.repository}`,
      provider: 'github',
      ref: ref?.name ? { name: ref.name, type: ref.type } : undefined,
      name: run.workflow,
      runId: run.runId,
      runUrl: url,
      task: run.job
    })
  })
}

/**
 * The commit the event is about: for a pull request its head (not the merge commit in
 * GITHUB_SHA), and once merged the commit that landed. Never the all-zero SHA of a deleted ref.
 */
function resolveVersion(run: RunContext): string | undefined {
  const { eventName: event, payload } = run
  let sha: string | undefined
  if (isMerge(event, payload)) sha = stringAt(payload, 'pull_request', 'merge_commit_sha')
  else if (PULL_REQUEST_EVENTS.has(event)) sha = stringAt(payload, 'pull_request', 'head', 'sha')
  else if (DEPLOYMENT_EVENTS.has(event)) sha = stringAt(payload, 'deployment', 'sha')
  else if (event === 'workflow_run') sha = stringAt(payload, 'workflow_run', 'head_sha')
  const version = sha ?? run.sha
  return version === undefined || /^0+$/.test(version) ? undefined : version
}

/** A pull request closed by merging it: squashed or rebased, its head never reaches the base. */
function isMerge(event: string, payload: unknown): boolean {
  return (
    PULL_REQUEST_EVENTS.has(event) &&
    valueAt(payload, ['action']) === 'closed' &&
    valueAt(payload, ['pull_request', 'merged']) === true
  )
}

/** Where an event says how the deploy ended: a deployment's state, a workflow run's conclusion. */
const OUTCOME_PATHS: Partial<Record<string, [string, string]>> = {
  deployment_status: ['deployment_status', 'state'],
  workflow_run: ['workflow_run', 'conclusion']
}

/** How the event says the deploy ended; undefined for an event that does not say. */
function eventOutcome(event: string, payload: unknown): EventOutcome | undefined {
  const path = OUTCOME_PATHS[event]
  const status = path && stringAt(payload, ...path)
  return status === undefined ? undefined : { outcome: outcomeOf(status), status }
}

/** The environment a deployment event names; undefined for any other event. */
export function deploymentEnvironment(event: string, payload: unknown): string | undefined {
  if (!DEPLOYMENT_EVENTS.has(event)) return undefined
  return (
    stringAt(payload, 'deployment', 'environment') ??
    stringAt(payload, 'deployment_status', 'environment')
  )
}

/** The run's page, on the server the run is on (GITHUB_SERVER_URL, so GHES works too). */
function runUrl(run: RunContext): string | undefined {
  if (!run.repository || !run.runId) return undefined
  const page = `${run.serverUrl}/${run.repository}/actions/runs/${run.runId}`
  return run.runAttempt ? `${page}/attempts/${run.runAttempt}` : page
}

function pullRequestNumber(event: string, payload: unknown): number | undefined {
  // Any event whose payload carries a pull request (pull_request*, pull_request_review*) names it.
  const number = numberAt(payload, 'pull_request', 'number')
  if (number !== undefined || event !== 'workflow_run') return number
  return numberAt(payload, 'workflow_run', 'pull_requests', 0, 'number')
}

// ---- The event's own words -------------------------------------------------------------------

/** A sentence naming what happened; undefined when nothing about it is known. */
function describeEvent(run: RunContext, sha?: string, outcome?: EventOutcome): string | undefined {
  const { eventName: event, payload, repository, workflow } = run
  const commit = sha && shortSha(sha)
  const at = commit && `at ${commit}`
  const of = repository && `of ${repository}`

  switch (event) {
    case 'push': {
      const ref = pushedRef(run)
      if (ref?.type === 'tag') return sentence('Deploy tag', ref.name, at, of)
      return sentence('Deploy', commit, ref && `on ${ref.name}`, of)
    }
    case 'release': {
      const release =
        stringAt(payload, 'release', 'tag_name') ?? stringAt(payload, 'release', 'name')
      return sentence('Release', release, of)
    }
    case 'pull_request':
    case 'pull_request_target': {
      const number = numberAt(payload, 'pull_request', 'number')
      const title = stringAt(payload, 'pull_request', 'title')
      const merged = isMerge(event, payload) && 'merged'
      return sentence('Pull request', number && `#${number}`, title && `"${title}"`, merged, at, of)
    }
    case 'deployment':
    case 'deployment_status': {
      const environment = deploymentEnvironment(event, payload)
      return sentence('Deploy', commit, of, environment && `to ${environment}`, ending(outcome))
    }
    case 'workflow_run': {
      const name =
        stringAt(payload, 'workflow_run', 'name') ?? stringAt(payload, 'workflow', 'name')
      const branch = stringAt(payload, 'workflow_run', 'head_branch')
      const head = name ? `Workflow "${name}" run` : 'Workflow run'
      return sentence(head, at, branch && `on ${branch}`, of, ending(outcome)) ?? (name && head)
    }
    case 'schedule':
      return sentence('Scheduled run', workflow && `of ${workflow}`, at, of)
    default:
      return sentence(event ? `${event} run` : 'Run', workflow && `of ${workflow}`, at, of)
  }
}

/** How the event says it ended, in plain words: "failed", "timed out"; nothing for a success. */
function ending(outcome: EventOutcome | undefined): string | undefined {
  if (outcome === undefined || outcome.status === 'success') return undefined
  return STATUS_WORDS[outcome.status] ?? outcome.status.replace(/_/g, ' ')
}
const STATUS_WORDS: Record<string, string> = {
  failure: 'failed',
  error: 'errored',
  startup_failure: 'failed to start'
}

/** The head followed by the details that are known; undefined when none is. */
function sentence(
  head: string,
  ...details: Array<string | false | 0 | undefined>
): string | undefined {
  const known = details.filter((detail): detail is string => Boolean(detail))
  return known.length > 0 ? [head, ...known].join(' ') : undefined
}

/** The branch or tag the run is for: a pull request's head, a workflow run's, or the pushed one. */
function headRef(run: RunContext): { type: 'branch' | 'tag'; name?: string } | undefined {
  if (PULL_REQUEST_EVENTS.has(run.eventName))
    return { type: 'branch', name: stringAt(run.payload, 'pull_request', 'head', 'ref') }
  if (run.eventName === 'workflow_run')
    return { type: 'branch', name: stringAt(run.payload, 'workflow_run', 'head_branch') }
  return pushedRef(run)
}

/** The branch or tag a push was to: from GITHUB_REF_NAME/GITHUB_REF_TYPE, else from the full ref. */
function pushedRef(run: RunContext): { type: 'branch' | 'tag'; name: string } | undefined {
  const { refName: name, refType: type } = run
  if (name && (type === 'branch' || type === 'tag')) return { type, name }
  const ref = run.ref ?? stringAt(run.payload, 'ref')
  if (ref?.startsWith('refs/heads/'))
    return { type: 'branch', name: ref.slice('refs/heads/'.length) }
  if (ref?.startsWith('refs/tags/')) return { type: 'tag', name: ref.slice('refs/tags/'.length) }
  return name ? { type: 'branch', name } : undefined
}

// ---- Reading values defensively -------------------------------------------------------------

/** The value at a path of keys and indexes, or undefined when any step is missing. */
function valueAt(root: unknown, path: Array<string | number>): unknown {
  let current = root
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined
    if (typeof key === 'number' && !Array.isArray(current)) return undefined
    if (!Object.hasOwn(current, key)) return undefined
    current = (current as Record<string | number, unknown>)[key]
  }
  return current
}

/** A non-blank string at the path, as one trimmed line. */
export function stringAt(root: unknown, ...path: Array<string | number>): string | undefined {
  const value = valueAt(root, path)
  return typeof value === 'string' ? oneLine(value) || undefined : undefined
}

/** A positive integer at the path (pull request numbers). */
function numberAt(root: unknown, ...path: Array<string | number>): number | undefined {
  const value = valueAt(root, path)
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined
}

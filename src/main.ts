/**
 * One step of the action: the runner's inputs and the run's context, then the command against the
 * service (or a dry run of it), then the report (src/step.ts). With `record-at: job-end` the main
 * step only checks the key and saves its start, and the post step records.
 */
import { contextDefaults, deploymentEnvironment } from './action/defaults.ts'
import { prepareJobEnd } from './action/job-end.ts'
import { readJobEnvironment } from './action/job-environment.ts'
import {
  checkedStart,
  IS_POST_STATE,
  JOB_END_STATE,
  jobEndStateText,
  type JobEndState
} from './action/post-state.ts'
import { readRunContext, type Env, type RunContext } from './action/run-context.ts'
import { githubRunner, type Runner } from './action/runner.ts'
import type { ShippedLookup, Subject } from './commands/command.ts'
import { InputError } from './errors.ts'
import { ACTION_NAME } from './package.ts'
import type { CallHints } from './service/client.ts'
import type { FailureAdvice } from './service/failures.ts'
import { Inputs, type Settings } from './settings.ts'
import {
  AFTER_DEPLOY_BUDGET_MS,
  COMMAND_HANDLERS,
  KEY_CHECK_BUDGET_MS,
  runStep,
  type StepTools
} from './step.ts'

/** What a failure tells the user to do, in terms of this action's inputs. */
const FAILURE_ADVICE: FailureAdvice = {
  raiseTimeout: `raise the ${Inputs.TimeoutSeconds} input`,
  checkAddress: `check the ${Inputs.BaseUrl} input`,
  checkApiKey: `check the ${Inputs.ApiKey} input and the key's permissions`
}
const CALL_HINTS: CallHints = {
  getChange: { 404: `No change has that id: check the ${Inputs.ChangeId} input.` },
  sendHeartbeat: {
    404: `No heartbeat monitor has that id: check the ${Inputs.HeartbeatId} input against the monitor page.`
  }
}

export async function run(runner: Runner = githubRunner, env: Env = process.env): Promise<void> {
  // First, so that the post step knows it is one whatever happens here.
  runner.saveState(IS_POST_STATE, 'true')
  await actionStep(runner, env, { phase: 'main' })
}

/** The post step of a `record-at: job-end` run whose main step saved its state. */
export async function runPost(
  jobEnd: JobEndState,
  runner: Runner = githubRunner,
  env: Env = process.env
): Promise<void> {
  await actionStep(runner, env, { phase: 'post', jobEnd })
}

type Phase = { phase: 'main' } | { phase: 'post'; jobEnd: JobEndState }

async function actionStep(runner: Runner, env: Env, phase: Phase): Promise<void> {
  const startedAt = Date.now()
  // Read by the main step once the settings are; a job-end post step has it from the main step.
  let jobEnvironment = phase.phase === 'post' ? phase.jobEnd.environment : undefined
  let context: RunContext | undefined
  await runStep(
    {
      sink: runner,
      getInput: name => runner.getInput(name),
      mask: secret => runner.setSecret(secret),
      advice: FAILURE_ADVICE,
      hints: CALL_HINTS
    },
    {
      async run(settings, tools) {
        const read = readRunContext(env)
        if (read.warning) tools.report.warning(read.warning)
        context = read.context
        if (phase.phase === 'main') {
          jobEnvironment = await jobEnvironmentFor(settings, context, env, runner, tools)
        }
        return contextDefaults({ ...context, jobEnvironment }, process.cwd())
      },
      lookUp: (settings, subject, signal) =>
        settings.commitsFrom === 'git'
          ? lookUpInWorkspace(settings, context!, env, subject, signal)
          : lookUpOnGitHub(settings, context!, subject, signal),
      budgetCap: settings => budgetCap(phase.phase, settings.recordAt),
      recordsChange: settings =>
        settings.command === 'change' && (phase.phase === 'post' || settings.recordAt === 'now'),
      async act(context, settings) {
        if (phase.phase === 'post') {
          const start = checkedStart(phase.jobEnd, startedAt)
          if (start.problem) {
            context.report.warning(
              `The deploy is recorded without its start or duration: ${start.problem}.`
            )
          }
          await COMMAND_HANDLERS[settings.command]({
            ...context,
            deploy: { ...settings.jobStatus, startedAt: start.startedAt, finishedAt: startedAt }
          })
        } else if (settings.recordAt === 'job-end') {
          await prepareJobEnd(context, (name, value) => runner.saveState(name, value), {
            at: startedAt,
            jobEnvironment
          })
        } else {
          await COMMAND_HANDLERS[settings.command](context)
        }
      },
      settle(error, { report, reporting }) {
        if (phase.phase === 'post' && error instanceof InputError) {
          // At the job's end an invalid input leaves the deploy unrecorded: say so, with the cause.
          const { saying } = error
          return new InputError(
            error.input,
            named => `The deploy was not recorded: ${saying(named)}`
          )
        }
        if (phase.phase === 'post' || reporting.recordAt !== 'job-end') return error
        // Tracking never decides whether the deploy runs: unless fail-on-error is true, the post
        // step still runs after it, and records, or fails the job there with the same cause.
        try {
          report.deferFailure(error, reporting.failOnError)
          runner.saveState(JOB_END_STATE, jobEndStateText(startedAt, jobEnvironment))
          return undefined
        } catch (fatal) {
          return fatal
        }
      }
    }
  )
}

/** A job-end main step checks the key before the deploy; a post step records after it. */
export function budgetCap(phase: Phase['phase'], recordAt: Settings['recordAt']): number {
  if (phase === 'post') return AFTER_DEPLOY_BUDGET_MS
  return recordAt === 'job-end' ? KEY_CHECK_BUDGET_MS : Infinity
}

/** What shipped, through the run's GitHub API; the lookup is loaded only for a lookup. */
async function lookUpOnGitHub(
  settings: Settings,
  run: RunContext,
  subject: Subject,
  signal?: AbortSignal
): ReturnType<ShippedLookup> {
  if (!run.repository) return {}
  const { lookUpShipped } = await import('./shipped/lookup.ts')
  return lookUpShipped({
    token: settings.githubToken,
    apiUrl: run.apiUrl,
    serverUrl: run.serverUrl,
    repository: run.repository,
    eventName: run.eventName,
    payload: run.payload,
    runId: run.runId,
    version: subject.version,
    previousVersion: settings.previousVersion,
    environment: subject.environment,
    advice: { tokenInput: Inputs.GithubToken },
    signal
  })
}

/**
 * What shipped, from the runner's checkout (`include-commits: git`): the previous-version input,
 * the tag the run is for, a push's `before`. The lookup is loaded only for a lookup.
 */
async function lookUpInWorkspace(
  settings: Settings,
  run: RunContext,
  env: Env,
  { version }: Subject,
  signal?: AbortSignal
): ReturnType<ShippedLookup> {
  const { gitEnvironment, lookUpInCheckout } = await import('./shipped/git-lookup.ts')
  const before = run.eventName === 'push' && (run.payload as { before?: unknown } | null)?.before
  return lookUpInCheckout({
    cwd: run.workspace ?? process.cwd(),
    env: gitEnvironment(env),
    version,
    previousVersion: settings.previousVersion,
    tag: run.refType === 'tag' ? run.refName : undefined,
    previousPush: typeof before === 'string' ? before.trim() : undefined,
    server: { kind: 'github', url: run.serverUrl },
    advice: {
      previousVersion: `the ${Inputs.PreviousVersion} input`,
      fullHistory: 'set fetch-depth: 0 on actions/checkout'
    },
    signal
  })
}

/**
 * The job's environment, from its OIDC token, when a change would have none otherwise (no
 * environment input, no deployment event) and the job may ask for a token (`id-token: write`).
 */
async function jobEnvironmentFor(
  settings: Settings,
  context: RunContext,
  env: Env,
  runner: Runner,
  { redactor, report }: StepTools
): Promise<string | undefined> {
  if (settings.command !== 'change' || settings.change.environment !== undefined) return undefined
  if (deploymentEnvironment(context.eventName, context.payload) !== undefined) return undefined
  const url = env['ACTIONS_ID_TOKEN_REQUEST_URL']
  const requestToken = env['ACTIONS_ID_TOKEN_REQUEST_TOKEN']
  if (!url || !requestToken) return undefined
  const found = await readJobEnvironment(runner, redactor, { url, requestToken }, ACTION_NAME)
  if ('problem' in found) {
    report.debug(`No environment from the job's OIDC token: ${found.problem}`)
    return undefined
  }
  report.info(
    `Environment "${found.environment}" from the job's OIDC token (its environment claim).`
  )
  return found.environment
}

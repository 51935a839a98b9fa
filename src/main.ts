/**
 * One run of the action: read the inputs and the run's context, run the command against the
 * service (or a dry run of it), report. With `record-at: job-end` the main step only checks and
 * saves its start, and the post step records.
 */
import { ACTION_NAME, ACTION_VERSION } from './package.ts'
import { contextDefaults, deploymentEnvironment } from './action/defaults.ts'
import { prepareJobEnd } from './action/job-end.ts'
import { readJobEnvironment } from './action/job-environment.ts'
import { readRunContext, type Env, type RunContext } from './action/run-context.ts'
import { githubRunner, type Runner } from './action/runner.ts'
import {
  checkedStart,
  IS_POST_STATE,
  JOB_END_STATE,
  jobEndStateText,
  type JobEndState
} from './action/post-state.ts'
import { recordChange, sendHeartbeat } from './commands/change.ts'
import type { CommandContext, CommandHandler } from './commands/command.ts'
import { getChange, hello } from './commands/read.ts'
import { errorMessage, InputError } from './errors.ts'
import { Redactor } from './redact.ts'
import { Report } from './report.ts'
import { ServiceClient, type CallHints } from './service/client.ts'
import { DryRunClient } from './service/dry-run-client.ts'
import type { FailureAdvice } from './service/failures.ts'
import { OUTAGE_BUDGET_MS } from './service/retry.ts'
import { Transport } from './service/transport.ts'
import { Inputs, type Command, type Settings } from './settings.ts'
import { readReportingSettings, readSecrets, readSettings } from './values/read-settings.ts'
import { checkServiceGlobs } from './values/services.ts'

const COMMAND_HANDLERS: Record<Command, CommandHandler> = {
  change: recordChange,
  heartbeat: sendHeartbeat,
  // Loaded only for these commands: reading event files brings in fs/promises, which a plain
  // `change` run should not pay for at start-up.
  events: async context => (await import('./commands/events.ts')).sendEvents(context),
  'event-results': async context => (await import('./commands/events.ts')).getEventResults(context),
  'get-change': getChange,
  hello
}

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

/** After SIGTERM, or a SIGINT with no change to record, the process exits within this. */
const CANCEL_EXIT_MS = 800
/**
 * After SIGINT, a run with a change to record sends it with what it knows within this, then
 * exits: before the runner's SIGTERM, 7.5 s after its SIGINT.
 */
export const CANCEL_GRACE_MS = 5_000
const SIGNAL_EXIT_CODES = { SIGTERM: 143, SIGINT: 130 } as const
type Signal = keyof typeof SIGNAL_EXIT_CODES
/** A job-end main step's key check, retries included: the most a tracking outage delays a deploy. */
export const KEY_CHECK_BUDGET_MS = 10_000
/**
 * A job-end post step's calls to the service, retries included, whatever timeout-seconds and
 * max-attempts say: with the lookup's 10 s it ends within 3 minutes (after a cancel, the runner
 * gives all remaining steps and post steps together about 4 min 45 s).
 */
export const POST_STEP_SERVICE_BUDGET_MS = 150_000

export async function run(runner: Runner = githubRunner, env: Env = process.env): Promise<void> {
  // First, so that the post step knows it is one whatever happens here.
  runner.saveState(IS_POST_STATE, 'true')
  await runStep(runner, env, { phase: 'main' })
}

/** The post step of a `record-at: job-end` run whose main step saved its state. */
export async function runPost(
  jobEnd: JobEndState,
  runner: Runner = githubRunner,
  env: Env = process.env
): Promise<void> {
  await runStep(runner, env, { phase: 'post', jobEnd })
}

type Phase = { phase: 'main' } | { phase: 'post'; jobEnd: JobEndState }

async function runStep(runner: Runner, env: Env, phase: Phase): Promise<void> {
  const startedAt = Date.now()
  const getInput = (name: string): string => runner.getInput(name)
  // Mask the secrets before anything else can print them.
  const redactor = new Redactor()
  for (const secret of readSecrets(getInput)) {
    runner.setSecret(secret)
    redactor.add(secret)
  }
  // A dry run's report replaces this one once every input is read.
  let report = new Report(runner, redactor)
  // Read first, so that an invalid input is reported under them.
  const reporting = readReportingSettings(getInput)
  const { failOnError: policy, jobSummary } = reporting
  let client: ServiceClient | undefined
  // SIGINT in a run with a change to record stops the lookup and lets the change be sent.
  const cancelled = new AbortController()
  let recordsChange = false
  let jobEnvironment: string | undefined
  let exiting = false
  const exitCancelled = (signal: Signal): void => {
    if (exiting) return
    exiting = true
    const exit = (): never => process.exit(SIGNAL_EXIT_CODES[signal])
    setTimeout(exit, CANCEL_EXIT_MS).unref()
    report.cancel(signal, client?.callsInFlight() ?? [], jobSummary).finally(exit)
  }
  const stopWatching = watchForCancellation(signal => {
    if (signal === 'SIGTERM' || !recordsChange || cancelled.signal.aborted)
      return exitCancelled(signal)
    cancelled.abort()
    setTimeout(() => exitCancelled(signal), CANCEL_GRACE_MS).unref()
  })

  let error: unknown
  try {
    const settings = readSettings(getInput, { reporting })
    if (settings.services) await checkServiceGlobs(settings.services)
    if (settings.triage.riskPaths)
      await checkServiceGlobs(settings.triage.riskPaths, Inputs.RiskPaths)
    report = new Report(runner, redactor, settings.dryRun)
    const { context, warning } = readRunContext(env)
    if (warning) report.warning(warning)
    recordsChange =
      settings.command === 'change' && (phase.phase === 'post' || settings.recordAt === 'now')
    // The main step reads the job's environment; a job-end post step has it from the main step.
    jobEnvironment =
      phase.phase === 'post'
        ? phase.jobEnd.environment
        : await jobEnvironmentFor(settings, context, env, runner, redactor, report)
    const budget = serviceBudget(settings, phase.phase)
    const transport = settings.dryRun ? undefined : transportFor(settings, budget, redactor, report)
    if (transport) client = new ServiceClient(transport, CALL_HINTS)
    const commandContext: CommandContext = {
      settings,
      run: contextDefaults({ ...context, jobEnvironment }, process.cwd()),
      client: client ?? new DryRunClient(settings.baseUrl, (r, url) => report.printRequest(r, url)),
      report,
      clock: Date.now,
      signal: cancelled.signal
    }
    try {
      if (phase.phase === 'post') {
        const start = checkedStart(phase.jobEnd, startedAt)
        if (start.problem) {
          report.warning(`The deploy is recorded without its start or duration: ${start.problem}.`)
        }
        await COMMAND_HANDLERS[settings.command]({
          ...commandContext,
          deploy: { ...settings.jobStatus, startedAt: start.startedAt, finishedAt: startedAt }
        })
      } else if (settings.recordAt === 'job-end') {
        await prepareJobEnd(commandContext, (name, value) => runner.saveState(name, value), {
          at: startedAt,
          jobEnvironment
        })
      } else {
        await COMMAND_HANDLERS[settings.command](commandContext)
      }
    } finally {
      transport?.close()
    }
  } catch (caught) {
    error = caught
  }
  if (phase.phase === 'post' && error instanceof InputError) {
    // At the job's end an invalid input leaves the deploy unrecorded: say so, with the cause.
    const { saying } = error
    error = new InputError(error.input, named => `The deploy was not recorded: ${saying(named)}`)
  }
  if (error !== undefined && phase.phase === 'main' && reporting.recordAt === 'job-end') {
    // Tracking never decides whether the deploy runs: unless fail-on-error is true, the post step
    // still runs after it, and records, or fails the job there with the same cause.
    try {
      report.deferFailure(error, policy)
      runner.saveState(JOB_END_STATE, jobEndStateText(startedAt, jobEnvironment))
      error = undefined
    } catch (fatal) {
      error = fatal
    }
  }
  try {
    await report.finish({ error, policy, jobSummary })
  } catch (reportError) {
    // Reporting itself failed (the runner refused an annotation, say): still say why.
    runner.setFailed(
      report.safe(`The action could not report its result: ${errorMessage(reportError)}`)
    )
  } finally {
    stopWatching()
  }
  // Cancelled while the change was recorded: it was sent with what was known; now say so.
  if (cancelled.signal.aborted) exitCancelled('SIGINT')
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
  redactor: Redactor,
  report: Report
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

/**
 * What one step may spend on the service: a job-end main step's key check at most
 * KEY_CHECK_BUDGET_MS, a post step's calls at most POST_STEP_SERVICE_BUDGET_MS, and otherwise the
 * outage budget, which a larger timeout-seconds raises so that its first attempt is not cut short.
 */
export function serviceBudget(
  settings: Pick<Settings, 'recordAt' | 'timeoutSeconds'>,
  phase: Phase['phase']
): { timeoutMs: number; outageBudgetMs: number } {
  const timeoutMs = settings.timeoutSeconds * 1000
  const cap =
    phase === 'post'
      ? POST_STEP_SERVICE_BUDGET_MS
      : settings.recordAt === 'job-end'
        ? KEY_CHECK_BUDGET_MS
        : Infinity
  const outageBudgetMs = Math.min(Math.max(OUTAGE_BUDGET_MS, timeoutMs), cap)
  return { timeoutMs: Math.min(timeoutMs, outageBudgetMs), outageBudgetMs }
}

/** The transport to the service, in this action's words. */
function transportFor(
  settings: Settings,
  { timeoutMs, outageBudgetMs }: ReturnType<typeof serviceBudget>,
  redactor: Redactor,
  report: Report
): Transport {
  return new Transport({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    timeoutMs,
    maxAttempts: settings.maxAttempts,
    userAgent: `${ACTION_NAME}/${ACTION_VERSION}`,
    redactor,
    advice: FAILURE_ADVICE,
    retry: { outageBudgetMs },
    log: message => report.info(message)
  })
}

/**
 * Until the run ends, SIGTERM and SIGINT (a cancelled job) go to `onSignal` instead of killing
 * the process mid-request. A signal that arrives while the run computes (matching globs, say) is
 * delivered once the event loop runs again. Returns what removes the listeners.
 */
function watchForCancellation(onSignal: (signal: Signal) => void): () => void {
  const signals = Object.keys(SIGNAL_EXIT_CODES) as Signal[]
  for (const signal of signals) process.on(signal, onSignal)
  return () => {
    for (const signal of signals) process.off(signal, onSignal)
  }
}

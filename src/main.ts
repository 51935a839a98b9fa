/**
 * One run of the action: read the inputs and the run's context, run the command against the
 * service (or a dry run of it), report. With `record-at: job-end` the main step only checks and
 * saves its start, and the post step records.
 */
import { ACTION_NAME, ACTION_VERSION, Inputs, type Command } from './action/names.ts'
import { readRunContext, type Env } from './action/run-context.ts'
import { githubRunner, type Runner } from './action/runner.ts'
import {
  readReportingSettings,
  readSecrets,
  readSettings,
  type Settings
} from './action/settings.ts'
import {
  checkedStart,
  IS_POST_STATE,
  JOB_END_STATE,
  jobEndStateText,
  type JobEndState
} from './action/post-state.ts'
import { recordChange, sendHeartbeat } from './commands/change.ts'
import type { CommandContext, CommandHandler } from './commands/command.ts'
import { prepareJobEnd } from './commands/job-end.ts'
import { getChange, hello } from './commands/read.ts'
import { errorMessage, InputError } from './errors.ts'
import { Redactor } from './redact.ts'
import { Report } from './report.ts'
import { ServiceClient, type CallHints } from './service/client.ts'
import { DryRunClient } from './service/dry-run-client.ts'
import type { FailureAdvice } from './service/failures.ts'
import { OUTAGE_BUDGET_MS } from './service/retry.ts'
import { Transport } from './service/transport.ts'

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

/** After SIGTERM or SIGINT the process exits within this, whatever reporting still does. */
const CANCEL_EXIT_MS = 800
const SIGNAL_EXIT_CODES = { SIGTERM: 143, SIGINT: 130 } as const

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
  const stopWatching = watchForCancellation(signal =>
    report.cancel(signal, client?.callsInFlight() ?? [], jobSummary)
  )

  let error: unknown
  try {
    const settings = readSettings(getInput, { reporting })
    report = new Report(runner, redactor, settings.dryRun)
    const { context, warning } = readRunContext(env)
    if (warning) report.warning(warning)
    const transport = settings.dryRun ? undefined : transportFor(settings, redactor, report)
    if (transport) client = new ServiceClient(transport, CALL_HINTS)
    const commandContext: CommandContext = {
      settings,
      run: context,
      client: client ?? new DryRunClient(settings.baseUrl, (r, url) => report.printRequest(r, url)),
      report,
      clock: Date.now
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
        await prepareJobEnd(
          commandContext,
          (name, value) => runner.saveState(name, value),
          startedAt
        )
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
    error = new InputError(error.input, `The deploy was not recorded: ${error.message}`)
  }
  if (error !== undefined && phase.phase === 'main' && reporting.recordAt === 'job-end') {
    // Tracking never decides whether the deploy runs: unless fail-on-error is true, the post step
    // still runs after it, and records, or fails the job there with the same cause.
    try {
      report.deferFailure(error, policy)
      runner.saveState(JOB_END_STATE, jobEndStateText(startedAt))
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
}

/** The transport to the service, in this action's words. */
function transportFor(settings: Settings, redactor: Redactor, report: Report): Transport {
  return new Transport({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    timeoutMs: settings.timeoutSeconds * 1000,
    maxAttempts: settings.maxAttempts,
    userAgent: `${ACTION_NAME}/${ACTION_VERSION}`,
    redactor,
    advice: FAILURE_ADVICE,
    // A timeout-seconds above the budget would otherwise be cut short on its first attempt.
    retry: {
      outageBudgetMs: Math.max(OUTAGE_BUDGET_MS, settings.timeoutSeconds * 1000)
    },
    log: message => report.info(message)
  })
}

/**
 * Until the run ends, SIGTERM or SIGINT (a cancelled job) is reported and the process exits
 * promptly instead of dying silently mid-request. A signal that arrives while the run computes
 * (matching globs, say) is delivered once the event loop runs again, and is still reported.
 * Returns what removes the listeners.
 */
function watchForCancellation(cancel: (signal: string) => Promise<void>): () => void {
  const onSignal = (signal: keyof typeof SIGNAL_EXIT_CODES): void => {
    const code = SIGNAL_EXIT_CODES[signal]
    setTimeout(() => process.exit(code), CANCEL_EXIT_MS).unref()
    cancel(signal).finally(() => process.exit(code))
  }
  const signals = Object.keys(SIGNAL_EXIT_CODES) as Array<keyof typeof SIGNAL_EXIT_CODES>
  for (const signal of signals) process.once(signal, onSignal)
  return () => {
    for (const signal of signals) process.off(signal, onSignal)
  }
}

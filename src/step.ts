/**
 * The core's steps, which each door calls in order: `openRun`, `runCommand`, `finishRun`. The door
 * hands its words in as data; nothing here calls back into a door.
 */
import { recordChange, sendHeartbeat } from './commands/change.ts'
import type { CommandContext, CommandHandler, ShippedLookup } from './commands/command.ts'
import { getChange, hello } from './commands/read.ts'
import type { RunDefaults } from './change.ts'
import type { DeployRecord } from './deploy.ts'
import { errorMessage } from './errors.ts'
import { ACTION_NAME, ACTION_VERSION } from './package.ts'
import { CancelledError, type Moment, type Verdict } from './policy.ts'
import { Redactor } from './redact.ts'
import { Report, type DoorWords, type ReportSink } from './report.ts'
import { ServiceClient } from './service/client.ts'
import { DryRunClient } from './service/dry-run-client.ts'
import { OUTAGE_BUDGET_MS } from './service/retry.ts'
import { Transport } from './service/transport.ts'
import {
  Inputs,
  type Command,
  type GetInput,
  type ReportingSettings,
  type Settings
} from './settings.ts'
import { readReportingSettings, readSecrets, readSettings } from './values/read-settings.ts'
import { checkServiceGlobs } from './values/services.ts'

export const COMMAND_HANDLERS: Record<Command, CommandHandler> = {
  change: recordChange,
  heartbeat: sendHeartbeat,
  // Loaded only for these commands: reading event files brings in fs/promises, which a plain
  // `change` run should not pay for at start-up.
  events: async context => (await import('./commands/events.ts')).sendEvents(context),
  'event-results': async context => (await import('./commands/events.ts')).getEventResults(context),
  'get-change': getChange,
  hello
}

/** After SIGTERM or SIGHUP, or a SIGINT with no change to record, the process exits within this. */
const CANCEL_EXIT_MS = 800
/**
 * After SIGINT, a step with a change to record sends it with what it knows within this, then
 * exits: before the runner's SIGTERM, 7.5 s after its SIGINT.
 */
export const CANCEL_GRACE_MS = 5_000
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
/** The shell's exit status for a process a signal ended. */
export const SIGNAL_EXIT_CODES: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }
/** A key check before a deploy, retries included: the most a tracking outage delays a deploy. */
export const KEY_CHECK_BUDGET_MS = 10_000
/**
 * The calls after a deploy, retries included, whatever timeout-seconds and max-attempts say: with
 * the lookup's 10 s a job-end post step ends within 3 minutes (after a cancel, the runner gives
 * all remaining steps and post steps together about 4 min 45 s).
 */
export const AFTER_DEPLOY_BUDGET_MS = 150_000

/**
 * What one step may spend on the service: each attempt, and all of an outage, which a larger
 * timeout-seconds raises so that its first attempt is not cut short, up to `cap`.
 */
export function serviceBudget(timeoutSeconds: number, cap: number) {
  const timeoutMs = timeoutSeconds * 1000
  const outageBudgetMs = Math.min(Math.max(OUTAGE_BUDGET_MS, timeoutMs), cap)
  return { timeoutMs: Math.min(timeoutMs, outageBudgetMs), outageBudgetMs }
}

/** What a door gives the core: where the report writes, its inputs, and its words. */
export interface Door {
  sink: ReportSink
  getInput: GetInput
  words: DoorWords
  /** Hides a secret where the door's own log could show it (the runner's ::add-mask::). */
  mask?: (secret: string) => void
  /** The door's own redactor, when it already holds secrets (the command line's parser's). */
  redactor?: Redactor
}

/** A run, opened: its report, and its settings or why they are invalid. */
export interface OpenRun {
  report: Report
  reporting: ReportingSettings
  redactor: Redactor
  words: DoorWords
  settings?: Settings
  /** Why a setting is invalid: nothing was sent. */
  error?: unknown
}

/** Masks the secrets first, then reads every setting once; an invalid one is kept as `error`. */
export async function openRun(door: Door): Promise<OpenRun> {
  const { getInput, sink, words } = door
  const redactor = door.redactor ?? new Redactor()
  for (const secret of readSecrets(getInput)) {
    door.mask?.(secret)
    redactor.add(secret)
  }
  const reporting = readReportingSettings(getInput)
  const opened = { reporting, redactor, words }
  try {
    const settings = readSettings(getInput, { reporting })
    if (settings.services) await checkServiceGlobs(settings.services)
    if (settings.triage.riskPaths)
      await checkServiceGlobs(settings.triage.riskPaths, Inputs.RiskPaths)
    return { ...opened, report: new Report(sink, redactor, words, settings.dryRun), settings }
  } catch (error) {
    return { ...opened, report: new Report(sink, redactor, words), error }
  }
}

/** What runCommand runs, and how. */
export interface CommandPlan {
  run: RunDefaults
  /** serviceBudget's cap: KEY_CHECK_BUDGET_MS before a deploy, AFTER_DEPLOY_BUDGET_MS after. */
  budgetCap: number
  /** The command's own work; the settings' command unless given. */
  act?: (context: CommandContext) => Promise<void>
  lookUp?: ShippedLookup
  deploy?: DeployRecord
  /**
   * `exit`, the default: a SIGTERM or SIGHUP ends the process at once, and a SIGINT while a change
   * is recorded lets it be sent with what is known within `graceMs`, then exits. `stop`: any of
   * them stops the command at once, which ends with a CancelledError; the door decides what next.
   */
  onSignal?: 'exit' | 'stop'
  graceMs?: number
}

/** Runs one command against the service (or prints it, in a dry run); resolves with its error. */
export async function runCommand(open: OpenRun, plan: CommandPlan): Promise<unknown> {
  const { settings, report, redactor, reporting, words } = open
  // A run opened with an error (an invalid setting, or the door's own) sends nothing.
  if (!settings || open.error !== undefined) return open.error
  const budget = serviceBudget(settings.timeoutSeconds, plan.budgetCap)
  const transport = settings.dryRun
    ? undefined
    : new Transport({
        baseUrl: settings.baseUrl,
        apiKey: settings.apiKey,
        timeoutMs: budget.timeoutMs,
        maxAttempts: settings.maxAttempts,
        userAgent: `${ACTION_NAME}/${ACTION_VERSION}`,
        redactor,
        advice: words.advice,
        retry: { outageBudgetMs: budget.outageBudgetMs },
        log: message => report.info(message)
      })
  const client = transport && new ServiceClient(transport, words.hints)
  const inFlight = () => client?.callsInFlight() ?? []
  // A cancel stops the lookup; the change is then sent with what is known.
  const cancelled = new AbortController()
  let stopped: CancelledError | undefined
  const exit = (signal: NodeJS.Signals): void => {
    const end = (): never => process.exit(SIGNAL_EXIT_CODES[signal])
    const late = setTimeout(end, CANCEL_EXIT_MS).unref()
    void report.cancel(signal, inFlight(), reporting.jobSummary).finally(() => {
      clearTimeout(late)
      end()
    })
  }
  const recordsChange = settings.command === 'change' && plan.act === undefined
  const onSignal = (signal: NodeJS.Signals): void => {
    const first = stopped === undefined
    stopped ??= new CancelledError(signal, inFlight())
    if (plan.onSignal === 'stop') {
      cancelled.abort()
      return transport?.close()
    }
    if (signal !== 'SIGINT' || !recordsChange || !first) return exit(signal)
    cancelled.abort()
    setTimeout(() => exit(signal), plan.graceMs ?? CANCEL_GRACE_MS).unref()
  }
  for (const signal of SIGNALS) process.on(signal, onSignal)
  try {
    await (plan.act ?? COMMAND_HANDLERS[settings.command])({
      settings,
      run: plan.run,
      client: client ?? new DryRunClient(settings.baseUrl, (r, url) => report.printRequest(r, url)),
      report,
      clock: Date.now,
      signal: cancelled.signal,
      lookUp: plan.lookUp,
      deploy: plan.deploy
    })
    return stopped
  } catch (error) {
    return stopped ?? error
  } finally {
    transport?.close()
    for (const signal of SIGNALS) process.off(signal, onSignal)
  }
}

/** The moment a command's error is judged at, after a deploy or alone. */
export function momentOf(command: Command): Moment {
  return ['get-change', 'event-results', 'hello'].includes(command) ? 'reading' : 'recording'
}

/**
 * Ends the run: the error, if any, judged by the failure policy at this moment and said in the
 * door's words, then the summary written. After a cancel the process exits with the signal's
 * status unless the door decides its own. Resolves with the verdict (none without an error).
 */
export async function finishRun(
  { report, reporting }: OpenRun,
  error: unknown,
  moment: Moment
): Promise<Verdict | undefined> {
  const { failOnError: policy, jobSummary } = reporting
  try {
    const verdict = await report.finish({ error, policy, jobSummary, moment })
    if (error instanceof CancelledError) process.exitCode = SIGNAL_EXIT_CODES[error.signal]
    return verdict
  } catch (reportError) {
    // Reporting itself failed (the runner refused an annotation, say): still say why.
    report.failed(`The result could not be reported: ${errorMessage(reportError)}`)
    return { failsNow: true, recordsAfter: false, failsAfter: false }
  }
}

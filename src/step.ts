/**
 * One step, the same through either door: mask the secrets, read the reporting settings and then
 * the rest, open the service (or its dry run), run what the door asks with the run as plain data,
 * report under the failure policy, and honour a cancel (SIGTERM ends the step within seconds; a
 * SIGINT in a step that records a change stops the lookup and lets the change be sent).
 */
import { recordChange, sendHeartbeat } from './commands/change.ts'
import type { CommandContext, CommandHandler, ShippedLookup } from './commands/command.ts'
import { getChange, hello } from './commands/read.ts'
import type { RunDefaults } from './change.ts'
import { errorMessage } from './errors.ts'
import { ACTION_NAME, ACTION_VERSION } from './package.ts'
import { Redactor } from './redact.ts'
import { Report, type ReportSink } from './report.ts'
import { ServiceClient, type CallHints } from './service/client.ts'
import { DryRunClient } from './service/dry-run-client.ts'
import type { FailureAdvice } from './service/failures.ts'
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

/** After SIGTERM, or a SIGINT with no change to record, the process exits within this. */
const CANCEL_EXIT_MS = 800
/**
 * After SIGINT, a step with a change to record sends it with what it knows within this, then
 * exits: before the runner's SIGTERM, 7.5 s after its SIGINT.
 */
export const CANCEL_GRACE_MS = 5_000
const SIGNAL_EXIT_CODES = { SIGTERM: 143, SIGINT: 130 } as const
type Signal = keyof typeof SIGNAL_EXIT_CODES
/** A key check before a deploy, retries included: the most a tracking outage delays a deploy. */
export const KEY_CHECK_BUDGET_MS = 10_000
/**
 * The calls after a deploy, retries included, whatever timeout-seconds and max-attempts say: with
 * the lookup's 10 s a job-end post step ends within 3 minutes (after a cancel, the runner gives
 * all remaining steps and post steps together about 4 min 45 s).
 */
export const AFTER_DEPLOY_BUDGET_MS = 150_000

/** What one step may spend on the service: each attempt, and all of an outage. */
export type ServiceBudget = { timeoutMs: number; outageBudgetMs: number }

/**
 * The outage budget, which a larger timeout-seconds raises so that its first attempt is not cut
 * short, within a cap: KEY_CHECK_BUDGET_MS before a deploy, AFTER_DEPLOY_BUDGET_MS after one.
 */
export function serviceBudget(timeoutSeconds: number, cap = Infinity): ServiceBudget {
  const timeoutMs = timeoutSeconds * 1000
  const outageBudgetMs = Math.min(Math.max(OUTAGE_BUDGET_MS, timeoutMs), cap)
  return { timeoutMs: Math.min(timeoutMs, outageBudgetMs), outageBudgetMs }
}

/** What a door gives every step: where the report writes, its inputs, and its words. */
export interface StepDoor {
  sink: ReportSink
  getInput: GetInput
  /** Hides a secret where the door's own log could show it (the runner's ::add-mask::). */
  mask?: (secret: string) => void
  /** What a failure tells the user to do, in the door's words for its settings. */
  advice: FailureAdvice
  hints: CallHints
}

/** What the report and the redactor are, for the door's work within the step. */
export type StepTools = { report: Report; redactor: Redactor; reporting: ReportingSettings }

/** What this step does, as the door decides once the settings are read. */
export interface StepPlan {
  /** The run as plain data: each door reads its own world (an event, a CI's variables). */
  run(settings: Settings, tools: StepTools): Promise<RunDefaults> | RunDefaults
  /** ServiceBudget's cap for this step. */
  budgetCap(settings: Settings): number
  /** Whether a SIGINT lets this step record its change. */
  recordsChange(settings: Settings): boolean
  act(context: CommandContext, settings: Settings): Promise<void>
  /** What shipped, as this door looks it up. */
  lookUp?(settings: Settings, ...lookup: Parameters<ShippedLookup>): ReturnType<ShippedLookup>
  /** The step's error before the policy decides on it: a job-end main step defers it. */
  settle?(error: unknown, tools: StepTools): unknown
}

/** Runs one step; resolves, once the report is written, with its error (reported) and its policy. */
export async function runStep(
  door: StepDoor,
  plan: StepPlan
): Promise<{ error?: unknown; reporting: ReportingSettings }> {
  const { getInput, sink } = door
  // Mask the secrets before anything else can print them.
  const redactor = new Redactor()
  for (const secret of readSecrets(getInput)) {
    door.mask?.(secret)
    redactor.add(secret)
  }
  // Read first, so that an invalid input is reported under them.
  const reporting = readReportingSettings(getInput)
  const { failOnError: policy, jobSummary } = reporting
  // A dry run's report replaces this one once every input is read.
  const tools: StepTools = { report: new Report(sink, redactor), redactor, reporting }
  let client: ServiceClient | undefined
  // SIGINT in a step with a change to record stops the lookup and lets the change be sent.
  const cancelled = new AbortController()
  let recordsChange = false
  let exiting = false
  const exitCancelled = (signal: Signal): void => {
    if (exiting) return
    exiting = true
    const exit = (): never => process.exit(SIGNAL_EXIT_CODES[signal])
    setTimeout(exit, CANCEL_EXIT_MS).unref()
    tools.report.cancel(signal, client?.callsInFlight() ?? [], jobSummary).finally(exit)
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
    tools.report = new Report(sink, redactor, settings.dryRun)
    const { report } = tools
    recordsChange = plan.recordsChange(settings)
    const run = await plan.run(settings, tools)
    const budget = serviceBudget(settings.timeoutSeconds, plan.budgetCap(settings))
    const transport = settings.dryRun ? undefined : transportFor(settings, budget, door, tools)
    if (transport) client = new ServiceClient(transport, door.hints)
    try {
      await plan.act(
        {
          settings,
          run,
          client:
            client ?? new DryRunClient(settings.baseUrl, (r, url) => report.printRequest(r, url)),
          report,
          clock: Date.now,
          signal: cancelled.signal,
          lookUp: plan.lookUp && ((subject, signal) => plan.lookUp!(settings, subject, signal))
        },
        settings
      )
    } finally {
      transport?.close()
    }
  } catch (caught) {
    error = plan.settle ? plan.settle(caught, tools) : caught
  }
  try {
    await tools.report.finish({ error, policy, jobSummary })
  } catch (reportError) {
    // Reporting itself failed (the runner refused an annotation, say): still say why.
    sink.setFailed(
      tools.report.safe(`The action could not report its result: ${errorMessage(reportError)}`)
    )
  } finally {
    stopWatching()
  }
  // Cancelled while the change was recorded: it was sent with what was known; now say so.
  if (cancelled.signal.aborted) exitCancelled('SIGINT')
  return { error, reporting }
}

/** The transport to the service, in the door's words. */
function transportFor(
  settings: Settings,
  { timeoutMs, outageBudgetMs }: ServiceBudget,
  door: StepDoor,
  { redactor, report }: StepTools
): Transport {
  return new Transport({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    timeoutMs,
    maxAttempts: settings.maxAttempts,
    userAgent: `${ACTION_NAME}/${ACTION_VERSION}`,
    redactor,
    advice: door.advice,
    retry: { outageBudgetMs },
    log: message => report.info(message)
  })
}

/**
 * Until the step ends, SIGTERM and SIGINT (a cancelled job) go to `onSignal` instead of killing
 * the process mid-request. A signal that arrives while the step computes (matching globs, say) is
 * delivered once the event loop runs again. Returns what removes the listeners.
 */
function watchForCancellation(onSignal: (signal: Signal) => void): () => void {
  const signals = Object.keys(SIGNAL_EXIT_CODES) as Signal[]
  for (const signal of signals) process.on(signal, onSignal)
  return () => {
    for (const signal of signals) process.off(signal, onSignal)
  }
}

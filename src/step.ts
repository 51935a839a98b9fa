/**
 * The core's steps, which each door calls in order: `openRun`, then `checkKey` before a deploy,
 * `runCommand` and `finishRun`. Each returns a value. A door hands in its inputs and its words as
 * data, and a cancel as an AbortSignal whose reason is the signal's name; nothing here touches
 * the process: a door decides what a signal means and what the process exits with.
 */
import { recordChange, requireSubject, sendHeartbeat } from './commands/change.ts'
import type { CommandContext, CommandHandler } from './commands/command.ts'
import { getChange, hello } from './commands/read.ts'
import type { RunDefaults } from './change.ts'
import type { DeployRecord } from './deploy.ts'
import { ACTION_NAME, ACTION_VERSION } from './package.ts'
import { CancelledError, type Moment, type Ruling } from './policy.ts'
import { Redactor } from './redact.ts'
import { Report, type DoorWords, type Renderer, type StepOutcome } from './report.ts'
import { ServiceClient, type CallInFlight } from './service/client.ts'
import { DryRunClient } from './service/dry-run-client.ts'
import { OUTAGE_BUDGET_MS } from './service/retry.ts'
import type { ServiceRequest } from './service/request.ts'
import { Transport } from './service/transport.ts'
import { Inputs, type Command, type ReportingSettings, type Settings } from './settings.ts'
import type { LookupSource } from './shipped/lookup-source.ts'
import { readReportingSettings, readSecrets, readSettings } from './values/read-settings.ts'
import { checkServiceGlobs } from './services/definition.ts'

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

/**
 * After a SIGINT, a step with a change to record sends it with what it knows within this (before
 * the runner's SIGTERM, 7.5 s after its SIGINT); any other cancel stops every call at once.
 */
export const CANCEL_GRACE_MS = 5_000
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

/** What a door gives the core: where the report goes, its settings as given, and its words. */
export interface Door {
  renderer: Renderer
  /** Every setting's raw value, by name: '' when it was not given. */
  inputs: Readonly<Record<string, string>>
  words: DoorWords
  /** The door's own redactor, when it already holds secrets (the command line's parser's). */
  redactor?: Redactor
  /** Why the door could not read part of its world (a key file): the run opens with it. */
  problem?: string
}

/** A run, opened: its report, and its settings or why they are invalid. */
export interface OpenRun {
  report: Report
  reporting: ReportingSettings
  redactor: Redactor
  words: DoorWords
  settings?: Settings
  /** Why a setting is invalid, or the door's problem: nothing is sent. */
  error?: unknown
}

/** Reads every setting once, its secrets redacted first; an invalid one is kept as `error`. */
export async function openRun(door: Door): Promise<OpenRun> {
  const { renderer, words } = door
  const getInput = (name: string): string => door.inputs[name] ?? ''
  const redactor = door.redactor ?? new Redactor()
  for (const secret of readSecrets(getInput)) redactor.add(secret)
  const reporting = readReportingSettings(getInput)
  const opened = { reporting, redactor, words }
  try {
    if (door.problem !== undefined) throw new Error(door.problem)
    const settings = readSettings(getInput, { reporting })
    if (settings.services) await checkServiceGlobs(settings.services)
    if (settings.triage.riskPaths)
      await checkServiceGlobs(settings.triage.riskPaths, Inputs.RiskPaths)
    return { ...opened, report: new Report(renderer, redactor, words, settings.dryRun), settings }
  } catch (error) {
    return { ...opened, report: new Report(renderer, redactor, words), error }
  }
}

/** How a step may be stopped: a cancel, then, for a change in flight, a halt. */
export interface Stopping {
  /**
   * Aborted by a cancel, its reason the signal's name: the lookup stops at once, and every call
   * too, but a change being recorded after a SIGINT, which is sent with what is known until
   * CANCEL_GRACE_MS or `halt`.
   */
  cancel?: AbortSignal
  /** Aborted when every call must stop now (a second signal). */
  halt?: AbortSignal
}

/** What a step against the service is given: the run as data, and its bound. */
export interface StepPlan extends Stopping {
  run: RunDefaults
  /** serviceBudget's cap: KEY_CHECK_BUDGET_MS before a deploy, AFTER_DEPLOY_BUDGET_MS after. */
  budgetCap: number
}

/**
 * Before a deploy: that the command can say what shipped (a change's version and service), and
 * that the service accepts the key. Nothing is recorded.
 */
export async function checkKey(open: OpenRun, plan: StepPlan): Promise<StepOutcome> {
  return withService(open, plan, false, async ({ settings, run, client }) => {
    if (settings.command === 'change') requireSubject(settings, run)
    await client.hello()
    return undefined
  })
}

/** Runs the settings' command against the service (or prints it, in a dry run). */
export async function runCommand(
  open: OpenRun,
  plan: StepPlan & { lookup?: LookupSource; deploy?: DeployRecord }
): Promise<StepOutcome> {
  const recordsChange = open.settings?.command === 'change'
  return withService(open, plan, recordsChange, context =>
    COMMAND_HANDLERS[context.settings.command](context)
  )
}

/**
 * One step against the service: its client within the step's budget, stopped as `plan` says
 * (`recordsChange`: a SIGINT lets the change be sent). A cancel answers with a CancelledError
 * naming the calls it found in flight, beside what the command did; a run opened with an error
 * sends nothing.
 */
async function withService(
  { settings, report, redactor, words, error }: OpenRun,
  plan: StepPlan & { lookup?: LookupSource; deploy?: DeployRecord },
  recordsChange: boolean,
  act: (context: CommandContext) => Promise<StepOutcome['result']>
): Promise<StepOutcome> {
  if (!settings || error !== undefined) return { error }
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
  const service = transport && new ServiceClient(transport, words.hints)
  const print = (request: ServiceRequest, url: URL) => report.printRequest(request, url)
  const lookups = new AbortController()
  // The calls a cancel found in flight, and those it stopped later: what may be recorded.
  const inFlight: CallInFlight[] = []
  const noteCalls = (): void => {
    for (const call of service?.callsInFlight() ?? [])
      if (!inFlight.some(known => known.label === call.label)) inFlight.push(call)
  }
  const stopAll = (): void => {
    noteCalls()
    transport?.close()
  }
  let cancelledBy: NodeJS.Signals | undefined
  const onCancel = (): void => {
    cancelledBy = plan.cancel?.reason as NodeJS.Signals
    noteCalls()
    lookups.abort()
    // A change being recorded is sent with what is known, unless a halt comes first.
    if (cancelledBy === 'SIGINT' && recordsChange) setTimeout(stopAll, CANCEL_GRACE_MS).unref()
    else stopAll()
  }
  const cancelled = () => cancelledBy && new CancelledError(cancelledBy, inFlight)
  const stops = [
    [plan.cancel, onCancel],
    [plan.halt, stopAll]
  ] as const
  for (const [signal, stop] of stops) {
    if (signal?.aborted) stop()
    else signal?.addEventListener('abort', stop, { once: true })
  }
  try {
    const result = await act({
      settings,
      run: plan.run,
      client: service ?? new DryRunClient(settings.baseUrl, print),
      report,
      clock: Date.now,
      signal: lookups.signal,
      lookup: plan.lookup,
      deploy: plan.deploy
    })
    return { result, error: cancelled() ?? result?.error }
  } catch (thrown) {
    return { error: cancelled() ?? thrown }
  } finally {
    transport?.close()
    for (const [signal, stop] of stops) signal?.removeEventListener('abort', stop)
  }
}

/** The moment a command's error is judged at, after a deploy or alone. */
export function momentOf(command: Command): Moment {
  return ['get-change', 'event-results', 'hello'].includes(command) ? 'reading' : 'recording'
}

/**
 * Ends the run: the command's outputs and summary, and its error judged by the failure policy at
 * this moment and said in the door's words. Resolves with the rulings, which the door applies.
 */
export async function finishRun(
  { report, reporting }: OpenRun,
  outcome: StepOutcome,
  moment: Moment
): Promise<Ruling[]> {
  const { failOnError: policy, jobSummary } = reporting
  return report.finish(outcome, { moment, policy, jobSummary })
}

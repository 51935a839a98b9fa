/**
 * Everything the action tells the user: outputs, log lines, annotations, the job summary (written
 * by summary.ts), the dry-run printout and the failure policy. The one way out for text: whatever
 * came from outside reaches the runner only through here: cut to what is shown, redacted, then
 * made inert (nothing can start a workflow command or move the terminal) and, in the summary,
 * escaped for markdown so that it is neither markup nor a link.
 */
import { errorMessage, InputError } from './errors.ts'
import { CancelledError, verdictOn, type Moment, type Verdict } from './policy.ts'
import { REDACTED, type Redactor } from './redact.ts'
import type { CallHints, CallInFlight } from './service/client.ts'
import type { FailureAdvice } from './service/failures.ts'
import { API_KEY_HEADER, type ServiceRequest } from './service/request.ts'
import { Outputs, type FailOnError, type OutputName } from './settings.ts'
import { shownOf, Summary, type Answer } from './summary.ts'
import { endSentence, inert, truncateText } from './text.ts'

/** A dry run prints at most this much of a request body. */
const DRY_RUN_BODY_CHARS = 4000
/**
 * Every log line, annotation and the `error` output is cut to this many code points: our own
 * words fit many times over; a hostile 1 MiB answer cannot flood the log.
 */
export const MAX_MESSAGE_CHARS = 4000

/** The outputs a dry run sets: what the lookup found, and the CDEvent (its id a new one). */
const DRY_RUN_OUTPUTS: ReadonlySet<OutputName> = new Set([
  Outputs.PreviousVersion,
  Outputs.CommitCount,
  Outputs.CompareUrl,
  Outputs.Rollback,
  Outputs.Cdevent
])

/**
 * Where a door shows what the report says: the runner (log commands, step outputs, the job
 * summary), or a terminal and files. Text reaches it already safe.
 */
export interface ReportSink {
  setOutput(name: string, value: string): void
  /** An output of these lines, written one by one: 100,000 event ids are never one string. */
  setOutputLines(name: string, lines: Iterable<string>): void
  info(message: string): void
  /** A line shown only when debug logging is on. */
  debug(message: string): void
  notice(message: string): void
  warning(message: string): void
  /** An error annotation that does not fail the step. */
  error(message: string): void
  /** An error annotation, and a failing exit code. */
  setFailed(message: string): void
  /** Appends markdown to the job summary, when there is one. */
  appendSummary(markdown: string): Promise<void>
}

/** A door's own words, which the core says for it: the core speaks neither door's. */
export interface DoorWords {
  /** How a setting is named in a message: 'Input "labels"', '--labels'. */
  inputName: (name: string) => string
  /** What a failure tells the user to do, in terms of the door's settings. */
  advice: FailureAdvice
  hints: CallHints
  /** The whole sentence for a missing API key. */
  missingKey: string
  /** After an error that does not fail the run: why, by an outage or by fail-on-error false. */
  notFailing: { outage: string; false: string }
  /** After an error before the deploy: what happens next, by the failure policy's verdict. */
  beforeDeploy: { failsNow: string; failsAfter: string; recordsAfter: string; unrecorded: string }
  /** What to check when an output cannot be written. */
  outputsAdvice: string
}

/**
 * Cut to MAX_MESSAGE_CHARS, secrets out, then one inert line: every printed line's form. Our own
 * `prefix` and `ending` are kept whole, and count within the bound: the cut falls in the text.
 */
export function safeLine(
  redactor: Redactor,
  text: string,
  { prefix = '', ending = '' }: { prefix?: string; ending?: string } = {}
): string {
  const room = MAX_MESSAGE_CHARS - Array.from(prefix + ending).length
  return `${prefix}${truncateText(inert(redactor.excerpt(text, room)), room)}${ending}`
}

/** A log line, or a line that tells an answer (which a dry run leaves out). */
export type Line = string | Answer<string>

export class Report {
  private readonly runner: ReportSink
  private readonly redactor: Redactor
  private readonly words: DoorWords
  /** The job summary, written when the run ends. */
  readonly summary: Summary
  /** The first output that could not be written: an error for finish() unless another came first. */
  private outputFailure: Error | undefined

  constructor(runner: ReportSink, redactor: Redactor, words: DoorWords, dryRun = false) {
    this.runner = runner
    this.redactor = redactor
    this.words = words
    this.summary = new Summary(redactor, dryRun)
  }

  /** Every printed message (log line, annotation) and the `error` output: see `safeLine`. */
  private safe(text: string): string {
    return safeLine(this.redactor, text)
  }

  /** An output value: secrets out, one inert line, never cut (JSON outputs can be long). */
  private outputValue(text: string): string {
    return inert(this.redactor.redact(text))
  }

  /**
   * Sets an output. One that cannot be written (a full disk) does not stop the run: what was
   * recorded stays recorded, and finish() reports the first such failure under the policy.
   */
  output(name: OutputName, value: string): void {
    if (this.summary.dryRun && !DRY_RUN_OUTPUTS.has(name)) return
    this.writingOutput(name, () => this.runner.setOutput(name, this.outputValue(value)))
  }

  /** An output written line by line; see ReportSink.setOutputLines. */
  outputLines(name: OutputName, lines: Iterable<string>): void {
    if (this.summary.dryRun && !DRY_RUN_OUTPUTS.has(name)) return
    this.writingOutput(name, () => this.runner.setOutputLines(name, this.outputValues(lines)))
  }

  private *outputValues(lines: Iterable<string>): Generator<string> {
    for (const line of lines) yield this.outputValue(line)
  }

  private writingOutput(name: OutputName, write: () => void): void {
    try {
      write()
    } catch (error) {
      this.outputFailure ??= new Error(
        `The ${name} output could not be written: ${errorMessage(error)}. ${this.words.outputsAdvice}`
      )
    }
  }

  info(line: Line): void {
    const text = shownOf(line, this.summary.dryRun)
    if (text !== undefined) this.runner.info(this.safe(text))
  }

  debug(text: string): void {
    this.runner.debug(this.safe(text))
  }

  notice(line: Line): void {
    const text = shownOf(line, this.summary.dryRun)
    if (text !== undefined) this.runner.notice(this.safe(text))
  }

  warning(message: string): void {
    this.runner.warning(this.safe(message))
  }

  /** Dry run: the request, as it would be sent, with the key masked. */
  printRequest(request: ServiceRequest, url: URL): void {
    this.info(`[dry-run] ${request.method} ${url.href}`)
    this.info(`  ${API_KEY_HEADER}: ${REDACTED}`)
    if (request.contentType) this.info(`  Content-Type: ${request.contentType}`)
    if (request.body === undefined) return
    const body =
      typeof request.body === 'string' ? request.body : Buffer.from(request.body).toString()
    // Cut through the redactor's window: a secret the cut splits is never shown in part.
    const shown = this.redactor.excerpt(body, DRY_RUN_BODY_CHARS)
    for (const line of shown.trimEnd().split('\n')) this.info(`  ${line}`)
    if (truncateText(body, DRY_RUN_BODY_CHARS) !== body)
      this.info(`  … (${Buffer.byteLength(body)} bytes in all)`)
  }

  /** An error in the door's words: an input named as the door names it, a missing key its way. */
  private messageOf(error: unknown): string {
    if (!(error instanceof InputError)) return errorMessage(error)
    return error.missing ? this.words.missingKey : error.saying(this.words.inputName(error.input))
  }

  /** A failure of the door's own, outside any command: it fails the run. */
  failed(text: string): void {
    this.runner.setFailed(this.safe(text))
  }

  /**
   * Ends the run: says the error, if any, as the failure policy's verdict has it (a cancel as a
   * warning that says whether something may already have been recorded), then writes the summary.
   * Either way the `error` output carries the message.
   */
  async finish(options: {
    error?: unknown
    policy: FailOnError
    jobSummary: boolean
    moment?: Moment
  }): Promise<Verdict | undefined> {
    const { policy, jobSummary, moment = 'recording' } = options
    if (this.summary.dryRun && options.error === undefined) this.info('Dry run: nothing was sent.')
    const error = options.error ?? this.outputFailure
    const verdict = error === undefined ? undefined : verdictOn(error, moment, policy)
    if (error instanceof CancelledError) {
      const calls = error.inFlight.map(call => call.label).join(' and ')
      const maybe = !calls
        ? 'No request was in flight.'
        : error.inFlight.some(call => call.records)
          ? `${calls} was in flight, so it may already have been recorded.`
          : `${calls} was in flight.`
      const message = `${error.message} ${maybe}`
      const line = this.safe(message)
      this.writingOutput(Outputs.Error, () => this.runner.setOutput(Outputs.Error, line))
      this.runner.warning(line)
      this.summary.cancelled(message)
    } else if (verdict) {
      const said = this.messageOf(error)
      const message = this.safe(said)
      // Where outputs cannot be written this one cannot either: the annotation still says it.
      this.writingOutput(Outputs.Error, () => this.runner.setOutput(Outputs.Error, message))
      const { beforeDeploy, notFailing } = this.words
      // prettier-ignore
      const after = moment === 'before-deploy'
        ? beforeDeploy[verdict.failsNow ? 'failsNow' : verdict.recordsAfter ? 'recordsAfter'
          : verdict.failsAfter ? 'failsAfter' : 'unrecorded']
        : verdict.failsNow ? '' : notFailing[policy === 'false' ? 'false' : 'outage']
      this.summary.failed(error, verdict.failsNow, message, after)
      // Our own ending is kept whole: a cut falls in the message before it.
      const line = after
        ? safeLine(this.redactor, endSentence(said), { ending: ` ${after}` })
        : message
      if (verdict.failsNow) this.runner.setFailed(line)
      else if (verdict.failsAfter) this.runner.error(line)
      else this.runner.warning(line)
    }
    if (jobSummary) await this.writeSummary()
    return verdict
  }

  /** The run was cancelled (SIGTERM or SIGINT) while a command ran: ends it as finish() does. */
  async cancel(
    signal: NodeJS.Signals,
    inFlight: readonly CallInFlight[],
    jobSummary: boolean
  ): Promise<void> {
    // What a cancel says does not depend on the policy; the verdict is the caller's to make.
    await this.finish({ error: new CancelledError(signal, inFlight), policy: 'false', jobSummary })
  }

  private async writeSummary(): Promise<void> {
    const markdown = this.summary.take()
    if (markdown === undefined) return
    try {
      await this.runner.appendSummary(this.redactor.redact(markdown))
    } catch (summaryError) {
      this.runner.warning(this.safe(`Could not write the summary: ${errorMessage(summaryError)}`))
    }
  }
}

/**
 * Everything the action tells the user: outputs, log lines, annotations, the job summary (written
 * by summary.ts), the dry-run printout and the failure policy. The one way out for text: whatever came from outside
 * reaches the runner only through here: cut to what is shown, redacted, then made inert (nothing
 * can start a workflow command or move the terminal) and, in the summary, escaped for markdown so
 * that it is neither markup nor a link.
 */
import { errorMessage, failureKind, type FailureKind } from './errors.ts'
import { REDACTED, type Redactor } from './redact.ts'
import type { CallInFlight } from './service/client.ts'
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

/**
 * Whether an error fails the step. Under `auto`, what the user must fix fails; a service outage
 * only warns, so that a tracking outage never turns a good deploy red.
 */
export function shouldFail(kind: FailureKind, policy: FailOnError): boolean {
  if (policy === 'true') return true
  if (policy === 'false') return false
  return kind !== 'outage'
}

/** The outputs a dry run sets: what the lookup found. Every other output is an answer. */
const DRY_RUN_OUTPUTS: ReadonlySet<OutputName> = new Set([
  Outputs.PreviousVersion,
  Outputs.CommitCount,
  Outputs.CompareUrl,
  Outputs.Rollback
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

/** A log line, or a line that tells an answer (which a dry run leaves out). */
export type Line = string | Answer<string>

export class Report {
  private readonly runner: ReportSink
  private readonly redactor: Redactor
  /** The job summary, written when the run ends. */
  readonly summary: Summary
  /** A dry run: no answers are shown or set as outputs, and the titles say what was not done. */
  private readonly dryRun: boolean
  /** The first output that could not be written: an error for finish() unless another came first. */
  private outputFailure: Error | undefined

  constructor(runner: ReportSink, redactor: Redactor, dryRun = false) {
    this.runner = runner
    this.redactor = redactor
    this.dryRun = dryRun
    this.summary = new Summary(redactor, dryRun)
  }

  /**
   * Cut to MAX_MESSAGE_CHARS, secrets out, then one inert line: the form every printed message
   * (log line, annotation) and the `error` output take on their way out.
   */
  safe(text: string): string {
    return this.safeEndingWith(text, '')
  }

  /** As `safe`, with our own ending kept whole: a cut falls in the text before it. */
  private safeEndingWith(text: string, ending: string): string {
    const room = MAX_MESSAGE_CHARS - Array.from(ending).length
    return `${truncateText(inert(this.redactor.excerpt(text, room)), room)}${ending}`
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
    if (this.dryRun && !DRY_RUN_OUTPUTS.has(name)) return
    this.writingOutput(name, () => this.runner.setOutput(name, this.outputValue(value)))
  }

  /** An output written line by line; see ReportSink.setOutputLines. */
  outputLines(name: OutputName, lines: Iterable<string>): void {
    if (this.dryRun && !DRY_RUN_OUTPUTS.has(name)) return
    const safe = (text: string): string => this.outputValue(text)
    this.writingOutput(name, () =>
      this.runner.setOutputLines(
        name,
        (function* () {
          for (const line of lines) yield safe(line)
        })()
      )
    )
  }

  private writingOutput(name: OutputName, write: () => void): void {
    try {
      write()
    } catch (error) {
      this.outputFailure ??= new Error(
        `The ${name} output could not be written: ${errorMessage(error)}. Check the runner's disk and its GITHUB_OUTPUT file.`
      )
    }
  }

  /**
   * A job-end main step's failure, under the policy: `true` fails the step before the deploy.
   * Otherwise tracking never decides whether the deploy runs: an outage warns, and under `auto`
   * anything the user must fix is an error annotation now and fails the job at its end, when the
   * post step meets it again; under `false` it warns that the deploy will not be recorded.
   */
  deferFailure(error: unknown, policy: FailOnError): void {
    if (policy === 'true') throw error
    const message = endSentence(errorMessage(error))
    if (failureKind(error) === 'outage') {
      this.warning(
        `${message} The deploy goes on: the post step will still try to record when the job ends.`
      )
    } else if (policy === 'auto') {
      this.runner.error(
        this.safe(
          `${message} The deploy goes on, and the job will fail when it ends (fail-on-error: auto).`
        )
      )
    } else {
      this.warning(
        `${message} The deploy goes on, and it will not be recorded (fail-on-error: false).`
      )
    }
  }

  info(line: Line): void {
    const text = this.shown(line)
    if (text !== undefined) this.runner.info(this.safe(text))
  }

  /** A line shown only when the run's debug logging is on. */
  debug(text: string): void {
    this.runner.debug(this.safe(text))
  }

  notice(line: Line): void {
    const text = this.shown(line)
    if (text !== undefined) this.runner.notice(this.safe(text))
  }

  /** What is shown of a line or a cell: an answer only in a real run. */
  private shown<T>(value: T | Answer<T>): T | undefined {
    return shownOf(value, this.dryRun)
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
    const shown = body.length > DRY_RUN_BODY_CHARS ? body.slice(0, DRY_RUN_BODY_CHARS) : body
    for (const line of shown.trimEnd().split('\n')) this.info(`  ${line}`)
    if (shown !== body) this.info(`  … (${Buffer.byteLength(body)} bytes in all)`)
  }

  /**
   * Ends the run: applies the failure policy to an error, if any, then writes the job summary.
   * A failure fails the step; any other error becomes a warning. Either way the `error` output
   * carries the message.
   */
  async finish(options: {
    error?: unknown
    policy: FailOnError
    jobSummary: boolean
  }): Promise<void> {
    const { policy, jobSummary } = options
    if (this.dryRun && options.error === undefined) this.info('Dry run: nothing was sent.')
    const error = options.error ?? this.outputFailure
    if (error !== undefined) {
      const message = this.safe(errorMessage(error))
      // Where outputs cannot be written this one cannot either: the annotation still says it.
      this.writingOutput(Outputs.Error, () => this.runner.setOutput(Outputs.Error, message))
      const fails = shouldFail(failureKind(error), policy)
      const why =
        policy === 'false' ? 'fail-on-error is false' : 'a service outage does not fail the step'
      this.summary.failed(error, fails, message, why)
      if (fails) {
        this.runner.setFailed(message)
      } else {
        this.runner.warning(
          this.safeEndingWith(errorMessage(error), ` (Not failing the step: ${why}.)`)
        )
      }
    }
    if (jobSummary) await this.writeSummary()
  }

  /**
   * The run was cancelled (SIGTERM or SIGINT): says so in the `error` output, a warning and the
   * summary, including whether something may already have been recorded.
   */
  async cancel(
    signal: string,
    inFlight: readonly CallInFlight[],
    jobSummary: boolean
  ): Promise<void> {
    const calls = inFlight.map(call => call.label).join(' and ')
    const maybe = !calls
      ? 'No request was in flight.'
      : inFlight.some(call => call.records)
        ? `${calls} was in flight, so it may already have been recorded.`
        : `${calls} was in flight.`
    const message = `The run was cancelled (${signal}) before it finished. ${maybe}`
    this.writingOutput(Outputs.Error, () =>
      this.runner.setOutput(Outputs.Error, this.safe(message))
    )
    this.runner.warning(this.safe(message))
    this.summary.cancelled(message)
    if (jobSummary) await this.writeSummary()
  }

  private async writeSummary(): Promise<void> {
    const markdown = this.summary.take()
    if (markdown === undefined) return
    try {
      await this.runner.appendSummary(this.redactor.redact(markdown))
    } catch (summaryError) {
      this.runner.warning(
        this.safe(`Could not write the job summary: ${errorMessage(summaryError)}`)
      )
    }
  }
}

/**
 * Everything the action tells the user: outputs, log lines, annotations, the job summary (written
 * by summary.ts), the dry-run printout and the failure policy. The one way out for text: whatever
 * came from outside reaches the runner only through here: cut to what is shown, redacted, then
 * made inert (nothing can start a workflow command or move the terminal) and, in the summary,
 * escaped for markdown so that it is neither markup nor a link.
 */
import { attempt, errorMessage, InputError } from './errors.ts'
import {
  CancelledError,
  rule,
  UnreportedError,
  type Moment,
  type Ruling,
  type Verdict
} from './policy.ts'
import { REDACTED, type Redactor } from './redact.ts'
import type { CallHints } from './service/client.ts'
import type { FailureAdvice } from './service/failures.ts'
import { API_KEY_HEADER, type ServiceRequest } from './service/request.ts'
import { Outputs, type FailOnError, type OutputName } from './settings.ts'
import { shownOf, Summary, type Answer, type Ending, type Section, type Title } from './summary.ts'
import { endSentence, inert, truncateText } from './helpers/text.ts'

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
 * A door's renderer: where it shows what the report says, in its own world (the runner's log
 * commands, step outputs and job summary; or a terminal and files). Text reaches it already safe.
 */
export interface Renderer {
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
  /** How each setting is named in a message, by its name: 'Input "labels"', '--labels'. */
  inputNames: Readonly<Record<string, string>>
  /** What a failure tells the user to do, in terms of the door's settings. */
  advice: FailureAdvice
  hints: CallHints
  /** The whole sentence for a missing API key. */
  missingKey: string
  /** After an error that does not fail the run: why, by what went wrong or by fail-on-error false. */
  notFailing: { outage: string; unreported: string; false: string }
  /** After an error before the deploy: what happens next, by the failure policy's verdict. */
  beforeDeploy: Record<Verdict, string>
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

/** The outputs a command sets: a value, or lines written one by one (100,000 event ids). */
export type OutputValues = Partial<Record<OutputName, string | Iterable<string>>>

/**
 * What a command did: the summary's title and sections, and the outputs, all door-neutral; and
 * what kept part of it from being done. Each door's renderer shows it in its own world.
 */
export interface CommandResult {
  title: Title
  sections: Section[]
  outputs: OutputValues
  error?: unknown
}

/** How a run ends: what its command did (none when it did not run), and its error, if any. */
export interface StepOutcome {
  result?: CommandResult
  error?: unknown
}

export class Report {
  private readonly renderer: Renderer
  private readonly redactor: Redactor
  private readonly words: DoorWords
  /** A dry run: answers are left out, and only the lookup's outputs are set. */
  readonly dryRun: boolean

  constructor(renderer: Renderer, redactor: Redactor, words: DoorWords, dryRun = false) {
    this.renderer = renderer
    this.redactor = redactor
    this.words = words
    this.dryRun = dryRun
  }

  /** Every printed message (log line, annotation) and the `error` output: see `safeLine`. */
  private safe(text: string): string {
    return safeLine(this.redactor, text)
  }

  info(line: Line): void {
    const text = shownOf(line, this.dryRun)
    if (text !== undefined) this.renderer.info(this.safe(text))
  }

  debug(text: string): void {
    this.renderer.debug(this.safe(text))
  }

  notice(line: Line): void {
    const text = shownOf(line, this.dryRun)
    if (text !== undefined) this.renderer.notice(this.safe(text))
  }

  warning(message: string): void {
    this.renderer.warning(this.safe(message))
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

  /** A failure of the door's own, outside any command: it fails the run. */
  failed(text: string): void {
    this.renderer.setFailed(this.safe(text))
  }

  /**
   * Ends the run: the command's outputs (in a dry run only the lookup's), its error said as the
   * failure policy rules it at this moment, then the summary. Either way the `error` output
   * carries the message. An output or summary that cannot be written is said last, by its own
   * ruling. Resolves with the rulings, in that order (none without an error).
   */
  async finish(
    { result, error }: StepOutcome,
    { moment, policy, jobSummary }: { moment: Moment; policy: FailOnError; jobSummary: boolean }
  ): Promise<Ruling[]> {
    if (this.dryRun && error === undefined) this.info('Dry run: nothing was sent.')
    const unwritten = this.writeOutputs(result?.outputs ?? {})
    const rulings: Ruling[] = []
    let ending: Ending | undefined
    if (error !== undefined) {
      const ruling = rule(error, moment, policy)
      ending = this.say(error, ruling, moment, policy)
      rulings.push(ruling)
    }
    const summary = new Summary(this.redactor, this.dryRun)
    const markdown = summary.markdown(result?.title ?? {}, result?.sections ?? [], ending)
    const failures = unwritten ? [unwritten] : []
    if (jobSummary && markdown !== undefined) {
      await this.renderer
        .appendSummary(this.redactor.redact(markdown))
        .catch((summaryError: unknown) => {
          failures.push(
            new UnreportedError(`Could not write the summary: ${errorMessage(summaryError)}`)
          )
        })
    }
    // What could not be reported is said whatever else happened, by its own ruling; the error
    // output keeps the run's own error.
    for (const failure of failures) {
      const ruling = rule(failure, moment, policy)
      this.say(failure, ruling, moment, policy, rulings.length === 0)
      rulings.push(ruling)
    }
    return rulings
  }

  /**
   * Writes each output (a dry run's, only the lookup's); resolves with the first that could not
   * be written: where one cannot be, the others most often cannot either.
   */
  private writeOutputs(outputs: OutputValues): UnreportedError | undefined {
    let failure: UnreportedError | undefined
    for (const [name, value] of Object.entries(outputs) as [
      OutputName,
      string | Iterable<string>
    ][]) {
      if (this.dryRun && !DRY_RUN_OUTPUTS.has(name)) continue
      try {
        if (typeof value === 'string') this.renderer.setOutput(name, this.outputValue(value))
        else this.renderer.setOutputLines(name, this.outputValues(value))
      } catch (error) {
        failure ??= this.unwritten(name, error)
      }
    }
    return failure
  }

  /** An output value: secrets out, one inert line, never cut (JSON outputs can be long). */
  private outputValue(text: string): string {
    return inert(this.redactor.redact(text))
  }

  private *outputValues(lines: Iterable<string>): Generator<string> {
    for (const line of lines) yield this.outputValue(line)
  }

  private unwritten(name: OutputName, error: unknown): UnreportedError {
    return new UnreportedError(
      `The ${name} output could not be written: ${errorMessage(error)}. ${this.words.outputsAdvice}`
    )
  }

  /**
   * Says an error as its ruling has it: a failure line, an error annotation (the run fails after
   * the deploy) or a warning, with what follows in the door's words; the `error` output carries
   * the message. Returns how the summary tells it.
   */
  private say(
    error: unknown,
    ruling: Ruling,
    moment: Moment,
    policy: FailOnError,
    setsErrorOutput = true
  ): Ending {
    const said = this.messageOf(error)
    const message = this.safe(said)
    // Where outputs cannot be written this one cannot either: the line still says it.
    if (setsErrorOutput) attempt(() => this.renderer.setOutput(Outputs.Error, message))
    const after = this.afterWords(ruling, moment, policy)
    // Our own ending is kept whole: a cut falls in the message before it.
    const line = after
      ? safeLine(this.redactor, endSentence(said), { ending: ` ${after}` })
      : message
    const fails = ruling.verdict === 'failsNow'
    if (fails) this.renderer.setFailed(line)
    else if (ruling.verdict === 'failsAfterDeploy') this.renderer.error(line)
    else this.renderer.warning(line)
    if (ruling.trouble === 'cancel') return { cancelled: said }
    return { failed: { error, fails, message, after } }
  }

  /** What follows an error: what happens to the deploy, or why the run does not fail. */
  private afterWords({ trouble, verdict }: Ruling, moment: Moment, policy: FailOnError): string {
    if (trouble === 'cancel') return ''
    if (moment === 'before-deploy' && trouble !== 'unreported')
      return this.words.beforeDeploy[verdict]
    if (verdict !== 'warns') return ''
    if (policy === 'false') return this.words.notFailing.false
    return this.words.notFailing[trouble === 'unreported' ? 'unreported' : 'outage']
  }

  /**
   * An error in the door's words: an input named as the door names it, a missing key its way, a
   * cancel with the calls it stopped (and whether something may already be recorded).
   */
  messageOf(error: unknown): string {
    if (error instanceof CancelledError) {
      const calls = error.inFlight.map(call => call.label).join(' and ')
      if (!calls) return `${error.message} No request was in flight.`
      const records = error.inFlight.some(call => call.records)
      return `${error.message} ${calls} was in flight${records ? ', so it may already have been recorded' : ''}.`
    }
    if (!(error instanceof InputError)) return errorMessage(error)
    if (error.missing) return this.words.missingKey
    return error.saying(this.words.inputNames[error.input] ?? `Input "${error.input}"`)
  }
}

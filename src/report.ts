/**
 * Everything the action tells the user: outputs, log lines, annotations, the job summary, the
 * dry-run printout and the failure policy. The one way out for text: whatever came from outside
 * reaches the runner only through here, first redacted, then made inert (nothing can start a
 * workflow command or move the terminal), and only then cut and, in the summary, escaped for
 * markdown so that it is neither markup nor a link.
 */
import { Outputs, type FailOnError, type OutputName } from './action/names.ts'
import type { Runner } from './action/runner.ts'
import { errorMessage, failureKind, type FailureKind } from './errors.ts'
import { ACTION_NAME } from './package.ts'
import { REDACTED, type Redactor } from './redact.ts'
import type { CallInFlight } from './service/client.ts'
import { API_KEY_HEADER, type ServiceRequest } from './service/request.ts'
import { collapseWhitespace, endSentence, escapeControls, inert, truncateText } from './text.ts'

/**
 * A table cell is cut to this in the job summary (the service still gets the whole value): a
 * default description (MAX_DESCRIPTION_CHARS) fits whole, and no cell makes a table run far off
 * the page. Links are ours, with short texts (a run, `9f8e7d6…a1b2c3d`), never a URL as text.
 */
export const MAX_SUMMARY_CELL_CHARS = 200
/** A paragraph of the summary (a note, the failure) wraps as a table cannot, so it may be longer. */
const MAX_SUMMARY_TEXT_CHARS = 500
/** The summary's heading until a command says what happened. */
const DEFAULT_TITLE = 'Change tracking'
/** A dry run prints at most this much of a request body. */
const DRY_RUN_BODY_CHARS = 4000
/**
 * Every log line, annotation and the `error` output is cut to this many code points, after
 * redaction: our own words fit many times over; a hostile 100 KB payload cannot flood the log.
 */
export const MAX_MESSAGE_CHARS = 4000

/** Why something was not done, by who must act, for a title: "Change not recorded: <why>". */
const FAILURE_REASONS: Record<FailureKind, string> = {
  input: 'an input is invalid',
  rejected: 'the service rejected the request',
  protocol: 'an unexpected answer or error',
  configuration: "the runner's setup kept the request from the service",
  outage: 'the service was unavailable'
}

/** Why an error kept something from being done, in a few words ("the service was unavailable"). */
export function failureReason(error: unknown): string {
  return FAILURE_REASONS[failureKind(error)]
}

/**
 * Whether an error fails the step. Under `auto`, what the user must fix fails; a service outage
 * only warns, so that a tracking outage never turns a good deploy red.
 */
export function shouldFail(kind: FailureKind, policy: FailOnError): boolean {
  if (policy === 'true') return true
  if (policy === 'false') return false
  return kind !== 'outage'
}

/**
 * What the service answered (an id, a count of results): a dry run has no answers, so its report
 * leaves them out. Its client's placeholders never reach a log line, the summary or an output.
 */
export type Answer<T> = { readonly answer: T }
export const answer = <T>(value: T): Answer<T> => ({ answer: value })

/** What a call did, and how a dry run says it instead ("Change recorded", "Change not sent"). */
const DRY_RUN_OUTCOMES = {
  recorded: 'not sent',
  received: 'not sent',
  sent: 'not sent',
  read: 'not read',
  valid: 'not checked'
} as const
export type Outcome = keyof typeof DRY_RUN_OUTCOMES

/** The outputs a dry run sets: what the lookup found. Every other output is an answer. */
const DRY_RUN_OUTPUTS: ReadonlySet<OutputName> = new Set([
  Outputs.PreviousVersion,
  Outputs.CommitCount,
  Outputs.CompareUrl,
  Outputs.Rollback
])

export type Link = { text: string; url?: string }
/** A summary cell: text, a number, a link or several (each shown as a link only when http(s)), or an answer. */
export type Cell =
  string | number | Link | readonly Link[] | Answer<string | number | undefined> | undefined
export type SummaryRow = readonly [label: string, value: Cell]
/** A log line, or a line that tells an answer (which a dry run leaves out). */
export type Line = string | Answer<string>

export class Report {
  private readonly runner: Runner
  private readonly redactor: Redactor
  private readonly sections: string[] = []
  /** The lead tables (see `lead`): first under the title. */
  private readonly leads: string[] = []
  /** A dry run: no answers are shown or set as outputs, and the titles say what was not done. */
  private readonly dryRun: boolean
  /** What the title opens with, before what was done ("Deploy failed after 9 s"). */
  private opening: string | undefined
  /** What was done ("Change recorded"), once a command says it. */
  private title: string | undefined
  /** What was not done, and why ("Heartbeat not sent", "the service was unavailable"). */
  private notDoneTitle: { what: string; why: string } | undefined
  /** The first output that could not be written: an error for finish() unless another came first. */
  private outputFailure: Error | undefined

  constructor(runner: Runner, redactor: Redactor, dryRun = false) {
    this.runner = runner
    this.redactor = redactor
    this.dryRun = dryRun
  }

  /**
   * Secrets out, then one inert line, cut to MAX_MESSAGE_CHARS: the form every printed message
   * (log line, annotation) and the `error` output take on their way out.
   */
  safe(text: string): string {
    return this.safeEndingWith(text, '')
  }

  /** As `safe`, with our own ending kept whole: a cut falls in the text before it. */
  private safeEndingWith(text: string, ending: string): string {
    const room = MAX_MESSAGE_CHARS - Array.from(ending).length
    return `${truncateText(inert(this.redactor.redact(text)), room)}${ending}`
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

  /** An output written line by line; see Runner.setOutputLines. */
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
    if (!isAnswer(value)) return value
    return this.dryRun ? undefined : value.answer
  }

  warning(message: string): void {
    this.runner.warning(this.safe(message))
  }

  /**
   * The summary's heading: what happened, e.g. "Change recorded" ('Change', 'recorded'), or in a
   * dry run what did not ("Change not sent"). `rest` follows the outcome (", 2 skipped").
   */
  setTitle(subject: string, outcome?: Outcome, rest = ''): void {
    if (outcome === undefined) this.title = subject
    else this.title = `${subject} ${this.dryRun ? DRY_RUN_OUTCOMES[outcome] : outcome}${rest}`
  }

  /**
   * What the title opens with, before what was done: "Deploy failed after 9 s" makes the title
   * "Deploy failed after 9 s: change recorded".
   */
  openTitleWith(opening: string): void {
    this.opening = opening
  }

  /**
   * What was not done, for the title, and the error that kept it from being done (the first one
   * said stays): "Change not recorded" and an outage make "Change not recorded: the service was
   * unavailable", after whatever was done ("Change recorded; heartbeat not sent: …").
   */
  notDone(what: string, error: unknown): void {
    this.notDoneTitle ??= { what, why: failureReason(error) }
  }

  /**
   * The summary's heading: the opening, what was done, then what was not done and why; an input
   * error instead names the action, and a run that said nothing of its own is "Change tracking".
   */
  private heading(): string {
    const notDone = this.notDoneTitle
    const said = [
      this.title,
      notDone &&
        (this.opening ? `${notDone.what} (${notDone.why})` : `${notDone.what}: ${notDone.why}`)
    ].filter(text => text !== undefined)
    const body = said.map((text, index) => (index ? lowerFirst(text) : text)).join('; ')
    if (!this.opening) return body || DEFAULT_TITLE
    return body ? `${this.opening}: ${lowerFirst(body)}` : this.opening
  }

  /**
   * A titled two-column table in the job summary; rows without a value (or with an answer, in a
   * dry run) are left out. With an outcome, a dry run's title says it: "Heartbeat (not sent)".
   */
  table(title: string, rows: readonly SummaryRow[], outcome?: Outcome): void {
    const table = this.fieldTable(title, rows, outcome)
    if (table) this.sections.push(table)
  }

  /**
   * The lead: a table right under the title, before the failure or warning line and every other
   * section, whenever it is called (several keep their order): what the on-call engineer reads
   * first, such as how the deploy ended. Rows as in `table`.
   */
  lead(title: string, rows: readonly SummaryRow[]): void {
    const table = this.fieldTable(title, rows)
    if (table) this.leads.push(table)
  }

  private fieldTable(
    title: string,
    rows: readonly SummaryRow[],
    outcome?: Outcome
  ): string | undefined {
    const shown = rows.filter(([, value]) => {
      const text = this.shown(value)
      return text !== undefined && text !== ''
    })
    if (shown.length === 0) return undefined
    const said = outcome && this.dryRun ? `${title} (${DRY_RUN_OUTCOMES[outcome]})` : title
    return this.tableMarkdown(said, ['Field', 'Value'], shown)
  }

  /**
   * A titled table with a header row, e.g. the commits a change ships. In a dry run an answer's
   * cell says what was not done ("not sent").
   */
  list(
    title: string,
    headers: readonly string[],
    rows: ReadonlyArray<readonly Cell[]>,
    outcome?: Outcome
  ): void {
    this.sections.push(this.tableMarkdown(title, headers, rows, outcome))
  }

  private tableMarkdown(
    title: string,
    headers: readonly string[],
    rows: ReadonlyArray<readonly Cell[]>,
    outcome?: Outcome
  ): string {
    const notDone = outcome && DRY_RUN_OUTCOMES[outcome]
    const line = (cells: readonly Cell[]): string =>
      `| ${cells.map(cell => this.cell(isAnswer(cell) && this.dryRun ? notDone : cell)).join(' | ')} |`
    return [
      `### ${this.cell(title)}`,
      '',
      line(headers),
      `|${headers.map(() => ' --- |').join('')}`,
      ...rows.map(line)
    ].join('\n')
  }

  /** A line of text in the job summary. */
  note(text: string): void {
    this.sections.push(this.text(text))
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
      this.titleFailure(error, fails)
      if (fails) {
        this.runner.setFailed(message)
        this.sections.unshift(`**Failed:** ${this.text(message)}`)
      } else {
        const why =
          policy === 'false' ? 'fail-on-error is false' : 'a service outage does not fail the step'
        this.runner.warning(
          this.safeEndingWith(errorMessage(error), ` (Not failing the step: ${why}.)`)
        )
        this.sections.unshift(`**Warning:** ${this.text(message)} (not failing the step: ${why})`)
      }
    }
    if (jobSummary) await this.writeSummary()
  }

  /**
   * The title after an error that no command said it kept from being done: an input error, or
   * one before anything was done, names the action ("change-tracking-action: an input is
   * invalid"); after something was done the title says that it then failed or warned.
   */
  private titleFailure(error: unknown, fails: boolean): void {
    if (failureKind(error) === 'input' || (this.title === undefined && !this.notDoneTitle)) {
      this.opening = undefined
      this.notDoneTitle = undefined
      this.title = `${ACTION_NAME}: ${failureReason(error)}`
    } else if (!this.notDoneTitle) {
      this.title = `${this.title}${fails ? ', then failed' : ' (with a warning)'}`
    }
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
    this.opening = undefined
    this.notDoneTitle = undefined
    this.title = 'Cancelled'
    this.sections.unshift(`**Cancelled:** ${this.text(message)}`)
    if (jobSummary) await this.writeSummary()
  }

  private async writeSummary(): Promise<void> {
    if (this.sections.length + this.leads.length === 0) return
    const blocks = [...this.leads, ...this.sections]
    const markdown = `## ${this.text(this.heading())}\n\n${blocks.join('\n\n')}\n`
    this.sections.length = 0
    this.leads.length = 0
    try {
      await this.runner.appendSummary(this.redactor.redact(markdown))
    } catch (summaryError) {
      this.runner.warning(
        this.safe(`Could not write the job summary: ${errorMessage(summaryError)}`)
      )
    }
  }

  /** A paragraph or heading: as a cell, cut at MAX_SUMMARY_TEXT_CHARS. */
  private text(text: string): string {
    return escapeCell(this.redactor.redact(text), MAX_SUMMARY_TEXT_CHARS)
  }

  /** A summary cell: redacted first, then one line, cut and escaped for markdown (escapeCell). */
  private cell(value: Cell): string {
    if (isAnswer(value)) return this.cell(value.answer)
    if (value === undefined) return ''
    if (typeof value === 'object') {
      if (Array.isArray(value)) return value.map(link => this.cell(link as Link)).join(', ')
      const link = value as Link
      const text = escapeCell(this.redactor.redact(link.text))
      const url = link.url === undefined ? undefined : safeUrl(this.redactor.redact(link.url))
      return url ? `[${text}](${url})` : text
    }
    return escapeCell(this.redactor.redact(String(value)))
  }
}

function isAnswer(value: unknown): value is Answer<unknown> {
  return typeof value === 'object' && value !== null && 'answer' in value
}

/**
 * Makes (already redacted) text safe inside a markdown table cell: one line, no markup, no link.
 * The runner never reads the summary for workflow commands, so only control characters are
 * escaped, and `##[` stays as written.
 */
export function escapeCell(text: string, max = MAX_SUMMARY_CELL_CHARS): string {
  return withoutAutolinks(
    truncateText(escapeControls(collapseWhitespace(text)), max)
      .replace(/([\\`*_[\]#~!()])/g, '\\$1')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/\|/g, '&#124;')
      // Where a cell opens a block (a note), "1." or "-" would start a list.
      .replace(/^(\d{1,9})([.)])/, '$1\\$2')
      .replace(/^([-+])/, '\\$1')
  )
}

/**
 * GFM links bare URLs, `www.` hosts and e-mail addresses by itself, which would make outside text
 * a link we did not build. It needs the `:` after a scheme, the `.` after `www` and the `@` as
 * plain characters, so they become character references: the text reads the same, and the link
 * is gone. Applied after `&` is escaped (so they stay references) and after the cut.
 */
function withoutAutolinks(markdown: string): string {
  return markdown
    .replace(/(?<=[a-z]):/gi, '&#58;')
    .replace(/(?<=www)\./gi, '&#46;')
    .replace(/@/g, '&#64;')
}

/** An http(s) URL for a markdown link, with the characters that could end the link encoded. */
function safeUrl(url: string): string | undefined {
  if (!/^https?:\/\/[^\s]+$/i.test(url)) return undefined
  return escapeControls(url).replace(
    /[()<>"'|\\[\]` ]/g,
    character => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`
  )
}

/** "Change recorded" as it reads after a colon; "API key valid" stays as it is. */
function lowerFirst(text: string): string {
  return /^\p{Lu}\p{Ll}/u.test(text) ? `${text[0].toLowerCase()}${text.slice(1)}` : text
}

/** A field of a change as the summary shows it: created_at also as a date. */
export function formatField(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (field === 'created_at' && typeof value === 'number' && Number.isFinite(value)) {
    return `${new Date(value * 1000).toISOString()} (${value})`
  }
  return typeof value === 'string' ? value : JSON.stringify(value)
}

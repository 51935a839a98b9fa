/**
 * The job summary as markdown: its title (how the run ended), the lead table first, then the
 * other tables and notes. Every cell is cut, redacted, made one line and escaped, so that outside
 * text is neither markup nor a link; the only links are ours, to http(s) URLs.
 */
import { failureKind, type FailureKind } from './errors.ts'
import { ACTION_NAME } from './package.ts'
import type { Redactor } from './redact.ts'
import { collapseWhitespace, endSentence, escapeControls, truncateText } from './helpers/text.ts'

/**
 * A table cell is cut to this in the job summary (the service still gets the whole value): a
 * default description (MAX_DESCRIPTION_CHARS) fits whole, and no cell makes a table run far off
 * the page. Links are ours, with short texts (a run, `9f8e7d6…a1b2c3d`), never a URL as text.
 */
export const MAX_SUMMARY_CELL_CHARS = 200
/** A longer address is no link: its text is still shown. */
const MAX_LINK_URL_CHARS = 2048
/** A paragraph of the summary (a note, the failure) wraps as a table cannot, so it may be longer. */
const MAX_SUMMARY_TEXT_CHARS = 500
/** The summary's heading until a command says what happened. */
const DEFAULT_TITLE = 'Change tracking'

/** Why something was not done, by who must act, for a title: "Change not recorded: <why>". */
const FAILURE_REASONS: Record<FailureKind, string> = {
  input: 'an input is invalid',
  rejected: 'the service rejected the request',
  protocol: 'an unexpected answer or error',
  configuration: "the runner's setup kept the request from the service",
  outage: 'the service was unavailable'
}

/** Why an error kept something from being done, in a few words ("the service was unavailable"). */
export const failureReason = (error: unknown): string => FAILURE_REASONS[failureKind(error)]

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

export type Link = { text: string; url?: string }
/** A summary cell: text, a number, a link or several (each shown as a link only when http(s)), or an answer. */
export type Cell =
  string | number | Link | readonly Link[] | Answer<string | number | undefined> | undefined
export type SummaryRow = readonly [label: string, value: Cell]

/** A part of the summary, as a command's result gives it. Rows without a value are left out. */
export type Section =
  /** A table right under the title, before the failure line: what the on-call engineer reads first. */
  | { lead: string; rows: readonly SummaryRow[] }
  /** A titled two-column table; with an outcome, a dry run's title says it: "Heartbeat (not sent)". */
  | { table: string; rows: readonly SummaryRow[]; outcome?: Outcome }
  /** A titled table with a header row; in a dry run an answer's cell says what was not done. */
  | {
      list: string
      headers: readonly string[]
      rows: ReadonlyArray<readonly Cell[]>
      outcome?: Outcome
    }
  /** A line of text. */
  | { note: string }

/** The summary's title, as a command's result says it. */
export interface Title {
  /** What the title opens with, before what was done: "Deploy failed after 9 s". */
  opening?: string
  /**
   * What was done: "Change recorded" ('Change', 'recorded'), or in a dry run what was not
   * ("Change not sent"); `rest` follows the outcome (", 2 skipped").
   */
  done?: { subject: string; outcome?: Outcome; rest?: string }
  /** What was not done, and the error that kept it from being done. */
  notDone?: { what: string; error: unknown }
}

/** How the run ended, when not as the command said: a failure (or its warning), or a cancel. */
export type Ending =
  | { failed: { error: unknown; fails: boolean; message: string; after: string } }
  | { cancelled: string }

/** The job summary's markdown, from a command's title and sections and how the run ended. */
export class Summary {
  private readonly redactor: Redactor
  /** A dry run: answers are left out, and the titles say what was not done. */
  private readonly dryRun: boolean

  constructor(redactor: Redactor, dryRun: boolean) {
    this.redactor = redactor
    this.dryRun = dryRun
  }

  /**
   * The whole summary: the title, the lead tables, the failure (or cancel) line, then the other
   * sections; undefined when there is nothing to show.
   */
  markdown(title: Title, sections: readonly Section[], ending?: Ending): string | undefined {
    const leads = sections.flatMap(section => ('lead' in section ? this.lead(section) : []))
    const rest = sections.flatMap(section => ('lead' in section ? [] : this.section(section)))
    const blocks = [...leads, ...(ending ? [this.endingLine(ending)] : []), ...rest]
    if (blocks.length === 0) return undefined
    return `## ${this.text(this.heading(title, ending))}\n\n${blocks.join('\n\n')}\n`
  }

  /**
   * The opening, what was done, then what was not done and why; an ending that names no command
   * (an input error, nothing done yet) names the action, and a cancel is the title.
   */
  private heading(title: Title, ending: Ending | undefined): string {
    if (ending && 'cancelled' in ending) return 'Cancelled'
    const failure = ending?.failed
    if (failure && (failureKind(failure.error) === 'input' || (!title.done && !title.notDone)))
      return `${ACTION_NAME}: ${failureReason(failure.error)}`
    const { opening, notDone } = title
    let done = title.done && this.doneText(title.done)
    if (failure && done !== undefined && !notDone)
      done += failure.fails ? ', then failed' : ' (with a warning)'
    const why = notDone && failureReason(notDone.error)
    const said = [
      done,
      notDone && (opening ? `${notDone.what} (${why})` : `${notDone.what}: ${why}`)
    ].filter(text => text !== undefined)
    const body = said.map((text, index) => (index ? lowerFirst(text) : text)).join('; ')
    if (!opening) return body || DEFAULT_TITLE
    return body ? `${opening}: ${lowerFirst(body)}` : opening
  }

  private doneText({ subject, outcome, rest = '' }: NonNullable<Title['done']>): string {
    if (outcome === undefined) return subject
    return `${subject} ${this.dryRun ? DRY_RUN_OUTCOMES[outcome] : outcome}${rest}`
  }

  /** The run's failure (or its warning), or its cancel, first after the lead. */
  private endingLine(ending: Ending): string {
    if ('cancelled' in ending) return `**Cancelled:** ${this.text(ending.cancelled)}`
    const { fails, message, after } = ending.failed
    const text = this.text(after ? `${endSentence(message)} ${after}` : message)
    return `**${fails ? 'Failed' : 'Warning'}:** ${text}`
  }

  private lead({ lead, rows }: { lead: string; rows: readonly SummaryRow[] }): string[] {
    return this.fieldTable(lead, rows)
  }

  private section(section: Exclude<Section, { lead: string }>): string[] {
    if ('note' in section) return [this.text(section.note)]
    if ('table' in section) return this.fieldTable(section.table, section.rows, section.outcome)
    const { list, headers, rows, outcome } = section
    return [this.tableMarkdown(list, headers, rows, outcome)]
  }

  /** A two-column table of the rows shown, or none when no row is. */
  private fieldTable(title: string, rows: readonly SummaryRow[], outcome?: Outcome): string[] {
    const shown = rows.filter(([, value]) => (shownOf(value, this.dryRun) ?? '') !== '')
    const said = outcome && this.dryRun ? `${title} (${DRY_RUN_OUTCOMES[outcome]})` : title
    return shown.length === 0 ? [] : [this.tableMarkdown(said, ['Field', 'Value'], shown)]
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

  /** A paragraph or heading: as a cell, cut at MAX_SUMMARY_TEXT_CHARS. */
  private text(text: string): string {
    return this.escaped(text, MAX_SUMMARY_TEXT_CHARS)
  }

  /** A summary cell: one line, without secrets, cut and escaped for markdown. */
  private cell(value: Cell): string {
    if (isAnswer(value)) return this.cell(value.answer)
    if (value === undefined) return ''
    if (typeof value !== 'object') return this.escaped(String(value))
    if (Array.isArray(value)) return value.map(link => this.cell(link as Link)).join(', ')
    const { text, url } = value as Link
    const href = url && url.length <= MAX_LINK_URL_CHARS && safeUrl(this.redactor.redact(url))
    return href ? `[${this.escaped(text)}](${href})` : this.escaped(text)
  }

  /** Cut first (outside text may be a megabyte), then without secrets, then escaped (escapeCell). */
  private escaped(text: string, max = MAX_SUMMARY_CELL_CHARS): string {
    return escapeCell(this.redactor.excerpt(text, max), max)
  }
}

/** What is shown of a line or a cell: an answer only in a real run. */
export function shownOf<T>(value: T | Answer<T>, dryRun: boolean): T | undefined {
  if (!isAnswer(value)) return value
  return dryRun ? undefined : value.answer
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

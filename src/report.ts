/**
 * Everything the action tells the user: outputs, log lines, annotations, the job summary, and the
 * failure policy. Every word passes through the redactor first.
 */
import { Outputs, type FailOnError, type OutputName } from './action/names.ts'
import { errorMessage, failureKind, type FailureKind } from './errors.ts'
import type { Redactor } from './redact.ts'
import type { Runner } from './action/runner.ts'

/** Cells longer than this are cut in the job summary (the service still gets the whole value). */
const MAX_SUMMARY_CELL_CHARS = 500

/**
 * Whether an error fails the step. Under `auto`, what the user must fix fails; a service outage
 * only warns, so that a tracking outage never turns a good deploy red.
 */
export function shouldFail(kind: FailureKind, policy: FailOnError): boolean {
  if (policy === 'true') return true
  if (policy === 'false') return false
  return kind !== 'outage'
}

export type SummaryRow = readonly [label: string, value: string | number | undefined]

export class Report {
  private readonly runner: Runner
  private readonly redactor: Redactor
  private readonly sections: string[] = []

  constructor(runner: Runner, redactor: Redactor) {
    this.runner = runner
    this.redactor = redactor
  }

  output(name: OutputName, value: string): void {
    this.runner.setOutput(name, this.redactor.redact(value))
  }

  /** An output written line by line; see Runner.setOutputLines. */
  outputLines(name: OutputName, lines: Iterable<string>): void {
    const redactor = this.redactor
    this.runner.setOutputLines(
      name,
      (function* () {
        for (const line of lines) yield redactor.redact(line)
      })()
    )
  }

  info(message: string): void {
    this.runner.info(this.redactor.redact(message))
  }

  debug(message: string): void {
    this.runner.debug(this.redactor.redact(message))
  }

  notice(message: string): void {
    this.runner.notice(this.redactor.redact(message))
  }

  warning(message: string): void {
    this.runner.warning(this.redactor.redact(message))
  }

  /** A titled two-column table in the job summary; rows without a value are left out. */
  table(title: string, rows: readonly SummaryRow[]): void {
    const lines = [`### ${escapeCell(title)}`, '', '| | |', '| --- | --- |']
    for (const [label, value] of rows) {
      if (value === undefined || value === '') continue
      lines.push(`| ${escapeCell(label)} | ${escapeCell(String(value))} |`)
    }
    this.sections.push(lines.join('\n'))
  }

  /** A paragraph in the job summary (plain text; escaped). */
  paragraph(text: string): void {
    this.sections.push(escapeCell(text))
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
    const { error, policy, jobSummary } = options
    if (error !== undefined) {
      const message = this.redactor.redact(errorMessage(error))
      this.runner.setOutput(Outputs.Error, message)
      const kind = failureKind(error)
      if (shouldFail(kind, policy)) {
        this.runner.setFailed(message)
        this.sections.push(`**Failed:** ${escapeCell(message)}`)
      } else {
        const why =
          policy === 'false' ? 'fail-on-error is false' : 'a service outage does not fail the step'
        this.runner.warning(`${message} (Not failing the step: ${why}.)`)
        this.sections.push(`**Warning:** ${escapeCell(message)} (not failing the step: ${why})`)
      }
    }
    if (!jobSummary || this.sections.length === 0) return
    const markdown = `## Change tracking\n\n${this.sections.join('\n\n')}\n`
    try {
      await this.runner.appendSummary(this.redactor.redact(markdown))
    } catch (summaryError) {
      this.runner.warning(
        this.redactor.redact(`Could not write the job summary: ${errorMessage(summaryError)}`)
      )
    }
  }
}

/** Makes text safe inside a markdown table cell: one line, no markup, no table breaks. */
export function escapeCell(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim()
  const chars = Array.from(oneLine) // code points, so an emoji is never cut in half
  const cut =
    chars.length > MAX_SUMMARY_CELL_CHARS
      ? `${chars.slice(0, MAX_SUMMARY_CELL_CHARS).join('')}…`
      : oneLine
  return cut
    .replace(/([\\`*_[\]#])/g, '\\$1')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '&#124;')
}

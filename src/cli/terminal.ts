/**
 * Where the command line's report goes: progress and results to standard error, one line each;
 * the outputs and the summary kept for standard output (--json) and the files a CI reads
 * (--outputs, --summary). Every line passes `safe` (redacted, inert, cut) on its way out, the
 * door's own lines too.
 */
import { rmSync, writeFileSync } from 'node:fs'
import type { ReportSink } from '../report.ts'

export class Terminal implements ReportSink {
  readonly outputs = new Map<string, string>()
  summary = ''
  private readonly write: (line: string, prefix?: string) => void
  readonly debug: (message: string) => void

  constructor(
    write: (line: string) => void,
    safe: (text: string, prefix?: string) => string,
    debugOn = false
  ) {
    this.write = (line, prefix = '') => write(safe(line, prefix))
    this.debug = debugOn ? message => this.write(message, 'debug: ') : () => {}
  }

  setOutput(name: string, value: string): void {
    this.outputs.set(name, value)
  }
  setOutputLines(name: string, lines: Iterable<string>): void {
    this.outputs.set(name, [...lines].join('\n'))
  }
  info = (message: string): void => this.write(message)
  notice = (message: string): void => this.write(message, 'notice: ')
  warning = (message: string): void => this.write(message, 'warning: ')
  error = (message: string): void => this.write(message, 'error: ')
  setFailed = this.error
  async appendSummary(markdown: string): Promise<void> {
    this.summary += markdown
  }
}

/**
 * The outputs as `NAME=value` lines (CHANGE_ID=…): GitLab's dotenv report format, which a shell
 * can source too. A value keeps only characters that neither acts on; any other is
 * percent-encoded (its UTF-8 bytes), `%` included, so sourcing the file runs nothing.
 */
export function outputsDotenv(outputs: ReadonlyMap<string, string>): string {
  return [...outputs]
    .map(([name, value]) => `${name.toUpperCase().replace(/-/g, '_')}=${dotenvValue(value)}\n`)
    .join('')
}

function dotenvValue(value: string): string {
  return value.replace(/[^A-Za-z0-9_.,:/@+=-]/gu, character =>
    Buffer.from(character).toString('hex').toUpperCase().replace(/../g, '%$&')
  )
}

/** Writes the files asked for; a file that cannot be written is a warning, not thrown. */
export function writeFiles(
  terminal: Terminal,
  files: { outputs?: string; summary?: string; cdevent?: string }
): void {
  const events = terminal.outputs.get('cdevent')
  // No event (a failed deploy, none recorded): an earlier run's file must not be sent for this one.
  if (events === undefined && files.cdevent !== undefined)
    terminal.warning('No CDEvent: no change was recorded.')
  const writes = [
    ['--outputs', files.outputs, () => outputsDotenv(terminal.outputs)],
    ['--summary', files.summary, () => terminal.summary],
    ['--cdevent', files.cdevent, () => (events ? `${events}\n` : undefined)]
  ] as const
  for (const [flag, path, text] of writes) {
    if (path === undefined) continue
    try {
      const body = text()
      if (body === undefined) rmSync(path, { force: true })
      else writeFileSync(path, body)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'an error'
      terminal.warning(`${flag} ${JSON.stringify(path)} could not be written (${code}).`)
    }
  }
}

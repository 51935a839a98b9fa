/**
 * Where the command line's report goes: progress and results to standard error, one line each;
 * the outputs and the summary kept for standard output (--json) and the files a CI reads
 * (--outputs, --summary). Every line passes `safe` (redacted, inert, cut) on its way out, the
 * door's own lines too.
 */
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync } from 'node:fs'
import { rmSync, writeFileSync } from 'node:fs'
import { attempt } from '../errors.ts'
import { inert } from '../helpers/text.ts'
import { isJsonObject, parseJsonSafely } from '../helpers/json.ts'
import { Outputs } from '../settings.ts'
import { formatField } from '../summary.ts'
import type { Renderer } from '../report.ts'

export class Terminal implements Renderer {
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
 * The outputs as one JSON object, a change read back as an object (its custom_metadata too, when
 * it is JSON). Values parsed back have their escapes as characters again: the whole is made inert
 * once more, which keeps its meaning as JSON.
 */
export function outputsJson(outputs: ReadonlyMap<string, string>): string {
  const object: Record<string, unknown> = Object.fromEntries(outputs)
  const change = outputs.get(Outputs.Change)
  if (change !== undefined) object[Outputs.Change] = changeObject(change)
  return inert(JSON.stringify(object))
}

/** A change as the service answered it, its custom_metadata parsed when it is JSON. */
function changeObject(text: string): unknown {
  const change = parseJsonSafely(text)
  if (!isJsonObject(change)) return text
  const { custom_metadata: metadata } = change
  const parsed = typeof metadata === 'string' ? parseJsonSafely(metadata) : undefined
  return parsed === undefined ? change : { ...change, custom_metadata: parsed }
}

/** A change read back as a person reads it: a field a line, then custom_metadata as indented JSON. */
export function changeLines(text: string): string[] {
  const change = changeObject(text)
  if (!isJsonObject(change)) return [text]
  const { custom_metadata: metadata, ...fields } = change
  const lines = Object.entries(fields).map(
    ([field, value]) => `${field}: ${formatField(field, value) ?? ''}`
  )
  if (metadata === undefined) return lines
  return [...lines, 'custom_metadata:', ...JSON.stringify(metadata, null, 2).split('\n')]
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

/**
 * Writes the files asked for; none throws. A path that is a link, or anything but a regular file
 * (a device, a FIFO, a socket), is left untouched with one warning. A regular file that cannot be
 * written is a failure to report: `fails` says whether the failure policy counts it (else a
 * warning). Returns whether every file asked for was written.
 */
export function writeFiles(
  terminal: Terminal,
  files: { outputs?: string; summary?: string; cdevent?: string },
  fails = false
): boolean {
  const events = terminal.outputs.get('cdevent')
  // No event (a failed deploy, none recorded): an earlier run's file must not be sent for this one.
  if (events === undefined && files.cdevent !== undefined)
    terminal.warning('No CDEvent: no change was recorded.')
  const writes = [
    ['--outputs', files.outputs, () => outputsDotenv(terminal.outputs)],
    ['--summary', files.summary, () => terminal.summary],
    ['--cdevent', files.cdevent, () => (events ? `${events}\n` : undefined)]
  ] as const
  let written = true
  for (const [flag, path, text] of writes) {
    if (path === undefined) continue
    const named = `${flag} ${JSON.stringify(path)}`
    try {
      const body = text()
      const refused = body === undefined ? removeRegularFile(path) : writeRegularFile(path, body)
      if (refused) terminal.warning(`${named} was left untouched: ${refused}.`)
    } catch (error) {
      written = false
      const code = (error as NodeJS.ErrnoException).code ?? 'an error'
      const say = fails ? terminal.error : terminal.warning
      say(`${named} could not be written (${code}).`)
    }
  }
  return written
}

/** Opened for writing: no link followed, and a FIFO without a reader refused instead of awaited. */
const WRITE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

/**
 * Why `path` is not written to or removed, when it is a link or anything but a regular file: read
 * with lstat first (every platform), then checked again on what was opened (O_NOFOLLOW, fstat).
 */
function notRegular(path: string): string | undefined {
  const found = attempt(() => lstatSync(path))
  if (found?.isSymbolicLink()) return 'it is a symbolic link, which is never followed'
  if (found && !found.isFile()) return 'it is not a regular file (a device, a FIFO or a socket)'
  return undefined
}

/** Writes `text` to the regular file at `path`, or says why not; other failures are thrown. */
function writeRegularFile(path: string, text: string): string | undefined {
  const refused = notRegular(path)
  if (refused) return refused
  let fd: number
  try {
    fd = openSync(path, WRITE_FLAGS, 0o666)
  } catch (error) {
    // What lstat saw changed since: a link (ELOOP) or a FIFO with no reader (ENXIO).
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || code === 'ENXIO') return notRegular(path) ?? `it is no longer a file`
    throw error
  }
  try {
    if (!fstatSync(fd).isFile()) return 'it is not a regular file (a device, a FIFO or a socket)'
    ftruncateSync(fd)
    writeFileSync(fd, text)
  } finally {
    closeSync(fd)
  }
  return undefined
}

/** Removes the regular file at `path`, if any: nothing else is ever removed. */
function removeRegularFile(path: string): string | undefined {
  const refused = notRegular(path)
  if (refused) return refused
  rmSync(path, { force: true })
  return undefined
}

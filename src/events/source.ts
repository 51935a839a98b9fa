/**
 * Reading events' text: inline text, or a file a chunk at a time, split into lines of bytes
 * with the byte order mark and surrounding JSON whitespace removed. Memory stays bounded by the
 * chunk size and the longest line allowed, whatever the file holds.
 */
import { Buffer, isUtf8 } from 'node:buffer'
import { open, stat } from 'node:fs/promises'
import { errorMessage } from '../errors.ts'
import { MAX_REQUEST_BYTES } from '../service/client.ts'
import { EventsError } from './events-error.ts'

/** Where the events come from: inline text, or a file's path. */
export type EventSource = { kind: 'inline'; text: string } | { kind: 'file'; path: string }

/**
 * The longest line read, without its "\n": a line longer than a request can never be sent, so
 * reading stops there instead of holding the line (a 3 GB file without a newline is one line).
 */
export const MAX_LINE_BYTES = MAX_REQUEST_BYTES

/**
 * The largest JSON document (a pretty-printed object or array) read: unlike NDJSON, a document
 * must be parsed whole, which takes several times its size in memory. Large inputs are NDJSON.
 */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024

/** How much of a file is read at a time: large, since each read is a trip to the thread pool. */
const READ_CHUNK_BYTES = 1024 * 1024
const NEWLINE = 0x0a
/** JSON's whitespace other than "\n": space, tab, carriage return. */
const LINE_PADDING = new Set([0x20, 0x09, 0x0d])
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf])
/** In a "u" pattern a valid surrogate pair is one code point, so only a lone half matches. */
const LONE_SURROGATE = /\p{Cs}/u

/** Thrown by readLines at a line longer than MAX_LINE_BYTES, as soon as it passes the limit. */
export class LineTooLong extends Error {
  /** 1-based. */
  readonly lineNumber: number
  /** The line's first byte that is not whitespace (-1 when there is none yet). */
  readonly firstByte: number
  constructor(lineNumber: number, firstByte: number, maxBytes: number) {
    super(`line ${lineNumber} is longer than ${maxBytes} bytes`)
    this.name = 'LineTooLong'
    this.lineNumber = lineNumber
    this.firstByte = firstByte
  }
}

/**
 * The source's lines as bytes, split on "\n" and stripped of surrounding JSON whitespace (so of
 * the "\r" of CRLF) and, on the first line, of a byte order mark. Blank lines are yielded (empty),
 * so that a reader can count lines. They come in groups, one per chunk of a file, each split
 * lazily: a group must be iterated to its end before the next is pulled.
 */
export async function* readLines(
  source: EventSource,
  maxLineBytes = MAX_LINE_BYTES
): AsyncGenerator<Iterable<Buffer>> {
  const splitter = new LineSplitter(maxLineBytes)
  if (source.kind === 'inline') {
    checkWellFormed(source.text)
    yield splitter.linesOf(Buffer.from(source.text, 'utf8'))
    yield splitter.rest()
    return
  }
  const file = await reading(open(source.path, 'r'))
  // One buffer, reused for every chunk: its lines are used up before the next read.
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES)
  try {
    for (;;) {
      const { bytesRead } = await reading(file.read(chunk, 0, chunk.length, null))
      if (bytesRead === 0) break
      yield splitter.linesOf(chunk.subarray(0, bytesRead))
    }
  } finally {
    await file.close()
  }
  yield splitter.rest()
}

/**
 * The whole source as text, for a JSON document: at most MAX_DOCUMENT_BYTES, valid UTF-8, without
 * its byte order mark.
 */
export async function readDocument(source: EventSource): Promise<string> {
  if (source.kind === 'inline') {
    checkWellFormed(source.text)
    if (Buffer.byteLength(source.text) > MAX_DOCUMENT_BYTES) throw documentTooLarge()
    return stripBom(source.text)
  }
  const file = await reading(open(source.path, 'r'))
  try {
    const chunks: Buffer[] = []
    let length = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES)
      const { bytesRead } = await reading(file.read(chunk, 0, chunk.length, null))
      if (bytesRead === 0) break
      chunks.push(chunk.subarray(0, bytesRead))
      length += bytesRead
      if (length > MAX_DOCUMENT_BYTES) throw documentTooLarge()
    }
    const text = Buffer.concat(chunks, length)
    if (!isUtf8(text)) throw notUtf8(firstInvalidUtf8Line(text))
    return stripBom(text.toString('utf8'))
  } finally {
    await file.close()
  }
}

/** Size and modification time: enough to notice that the file changed between the passes. */
export async function fileVersionOf(path: string): Promise<string> {
  const stats = await reading(stat(path))
  if (!stats.isFile()) throw new EventsError('unreadable', ' is not a file.')
  return `${stats.size}:${stats.mtimeMs}`
}

/** Invalid UTF-8 on a line. */
export function notUtf8(lineNumber: number): EventsError {
  return new EventsError(
    'invalid',
    `, line ${lineNumber}: it is not valid UTF-8. Save the file as UTF-8. Nothing was sent.`,
    [{ position: { unit: 'line', at: lineNumber }, problem: 'it is not valid UTF-8' }]
  )
}

class LineSplitter {
  private readonly maxLineBytes: number
  /** The start of a line that continues in later chunks, in pieces: joined once, when it ends. */
  private pending: Buffer[] = []
  private pendingBytes = 0
  private linesYielded = 0

  constructor(maxLineBytes: number) {
    this.maxLineBytes = maxLineBytes
  }

  *linesOf(chunk: Buffer): Generator<Buffer> {
    let start = 0
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, end)
      this.checkLength(piece)
      if (this.pending.length === 0) {
        yield this.trim(piece)
      } else {
        this.pending.push(piece)
        const line = Buffer.concat(this.pending)
        this.pending = []
        this.pendingBytes = 0
        yield this.trim(line)
      }
      start = end + 1
    }
    if (start < chunk.length) {
      const piece = chunk.subarray(start)
      // Checked before it is kept: a line past the limit is refused, never held.
      this.checkLength(piece)
      // Copied: the chunk's buffer is reused for the next read.
      this.pending.push(Buffer.from(piece))
      this.pendingBytes += piece.length
    }
  }

  /** The last line, when the source does not end with a newline. */
  *rest(): Generator<Buffer> {
    if (this.pending.length > 0) yield this.trim(Buffer.concat(this.pending))
    this.pending = []
    this.pendingBytes = 0
  }

  private checkLength(piece: Buffer): void {
    if (this.pendingBytes + piece.length <= this.maxLineBytes) return
    const head = [...this.pending, piece].map(part => firstNonPadding(part)).find(b => b !== -1)
    throw new LineTooLong(this.linesYielded + 1, head ?? -1, this.maxLineBytes)
  }

  private trim(line: Buffer): Buffer {
    let start = 0
    if (this.linesYielded++ === 0 && line.subarray(0, UTF8_BOM.length).equals(UTF8_BOM)) {
      start = UTF8_BOM.length
    }
    let end = line.length
    while (start < end && LINE_PADDING.has(line[start])) start++
    while (end > start && LINE_PADDING.has(line[end - 1])) end--
    return start === 0 && end === line.length ? line : line.subarray(start, end)
  }
}

function firstNonPadding(bytes: Buffer): number {
  for (const byte of bytes) if (!LINE_PADDING.has(byte) && byte !== NEWLINE) return byte
  return -1
}

/** Inline text comes as a string: a lone surrogate is its form of invalid UTF-8. */
function checkWellFormed(text: string): void {
  if (!LONE_SURROGATE.test(text)) return
  const lines = text.split('\n')
  throw notUtf8(lines.findIndex(line => LONE_SURROGATE.test(line)) + 1)
}

function firstInvalidUtf8Line(bytes: Buffer): number {
  let lineNumber = 1
  let start = 0
  for (;;) {
    const end = bytes.indexOf(NEWLINE, start)
    if (!isUtf8(bytes.subarray(start, end === -1 ? bytes.length : end))) return lineNumber
    if (end === -1) return lineNumber
    lineNumber++
    start = end + 1
  }
}

const READ_ERRORS: Partial<Record<string, string>> = {
  ENOENT: 'there is no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a directory'
}

/** A file system call whose failure says why the file cannot be read. */
async function reading<T>(call: Promise<T>): Promise<T> {
  try {
    return await call
  } catch (error) {
    const reason = READ_ERRORS[String((error as { code?: unknown }).code)] ?? errorMessage(error)
    throw new EventsError('unreadable', ` cannot be read: ${reason}.`)
  }
}

function documentTooLarge(): EventsError {
  return new EventsError(
    'invalid',
    ` is a JSON document of more than ${MAX_DOCUMENT_BYTES} bytes, which is read whole. Write large inputs as NDJSON (one event object per line), which is read a line at a time. Nothing was sent.`
  )
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/**
 * Reading events' text: inline text, or a file a chunk at a time, split into lines of bytes
 * with the byte order mark and surrounding JSON whitespace removed. Memory stays bounded by the
 * chunk size and the longest line allowed, whatever the file holds.
 */
import { Buffer, isUtf8 } from 'node:buffer'
import { open, stat } from 'node:fs/promises'
import { errorMessage } from '../errors.ts'
import { MAX_JSON_DEPTH, isJsonObject, jsonDepthExceededAt, rawJson } from '../helpers/json.ts'
import { MAX_REQUEST_BYTES } from '../service/client.ts'

/** Where the events come from: inline text, or a file's path. */
export type EventSource = { kind: 'inline'; text: string } | { kind: 'file'; path: string }

/**
 * A bad input: "invalid" (the default: nothing was sent), "unreadable", or "changed" (between
 * validating and sending). The command layer names the input before `detail`.
 */
export class EventsError extends Error {
  readonly kind: 'invalid' | 'unreadable' | 'changed'
  /** The rest of the sentence after the input's name: ", line 3: …" or " has no events. …". */
  readonly detail: string

  constructor(detail: string, kind: EventsError['kind'] = 'invalid') {
    super(`The events${detail}`)
    this.kind = kind
    this.detail = detail
  }
}

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

export const ACCEPTED_FORMS =
  'Give one JSON event object, a JSON array of events, or NDJSON (one event object per line).'

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
  /** The line's first byte that is not whitespace, if one was read. */
  readonly firstByte?: number

  constructor(lineNumber: number, firstByte?: number) {
    super(`line ${lineNumber} is longer than ${MAX_LINE_BYTES} bytes`)
    this.lineNumber = lineNumber
    this.firstByte = firstByte
  }
}

/** A non-blank line, with its 1-based number in the source. */
export type NumberedLine = { at: number; line: Buffer }

/**
 * The source's non-blank lines, numbered, as bytes without surrounding JSON whitespace (so without
 * the "\r" of CRLF) or a byte order mark. One group per chunk of a file, split lazily: a group must
 * be iterated to its end before the next is pulled.
 */
export async function* readLines(source: EventSource): AsyncGenerator<Iterable<NumberedLine>> {
  // The start of a line that continues in later chunks, in pieces: joined once, when it ends.
  const pending: Buffer[] = []
  let pendingBytes = 0
  let lineNumber = 0
  // Checked before a piece is kept: a line past the limit is refused, never held.
  const checkLength = (piece: Buffer): void => {
    if (pendingBytes + piece.length <= MAX_LINE_BYTES) return
    const head = Buffer.concat([...pending, piece]).find(byte => !LINE_PADDING.has(byte))
    throw new LineTooLong(lineNumber + 1, head)
  }
  // A blank line is counted, not yielded.
  function* trimmed(line: Buffer): Generator<NumberedLine> {
    const bom = lineNumber++ === 0 && line.subarray(0, 3).equals(UTF8_BOM)
    let start = bom ? UTF8_BOM.length : 0
    let end = line.length
    while (start < end && LINE_PADDING.has(line[start])) start++
    while (end > start && LINE_PADDING.has(line[end - 1])) end--
    if (start < end) yield { at: lineNumber, line: line.subarray(start, end) }
  }
  function* linesOf(chunk: Buffer): Generator<NumberedLine> {
    let start = 0
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, end)
      checkLength(piece)
      start = end + 1
      const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece])
      pending.length = 0
      pendingBytes = 0
      yield* trimmed(line)
    }
    if (start < chunk.length) {
      const piece = chunk.subarray(start)
      checkLength(piece)
      // Copied: the chunk's buffer is reused for the next read.
      pending.push(Buffer.from(piece))
      pendingBytes += piece.length
    }
  }
  for await (const chunk of chunksOf(source)) yield linesOf(chunk)
  // The last line, when the source does not end with a newline.
  if (pending.length > 0) yield trimmed(Buffer.concat(pending))
}

/** The events of a JSON document (an event object, or an array of them), read whole. */
export async function readDocument(source: EventSource): Promise<unknown[]> {
  const parts: Buffer[] = []
  let length = 0
  for await (const chunk of chunksOf(source)) {
    length += chunk.length
    if (length > MAX_DOCUMENT_BYTES) {
      throw new EventsError(
        ` is a JSON document of more than ${MAX_DOCUMENT_BYTES} bytes, which is read whole. Write large inputs as NDJSON (one event object per line), which is read a line at a time. Nothing was sent.`
      )
    }
    parts.push(Buffer.from(chunk))
  }
  const bytes = Buffer.concat(parts, length)
  if (!isUtf8(bytes)) throw notUtf8(firstInvalidUtf8Line(bytes))
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '')
  // Checked before parsing: the parser recurses, and a deep document overflows its stack.
  const deepAt = jsonDepthExceededAt(text)
  if (deepAt !== -1) {
    const line = text.slice(0, deepAt).split('\n').length
    throw new EventsError(
      `, line ${line}: it nests JSON deeper than ${MAX_JSON_DEPTH} levels, the most accepted. Nothing was sent.`
    )
  }
  let document: unknown
  try {
    document = JSON.parse(text, keepNumbersAsWritten)
  } catch (error) {
    throw new EventsError(` is not valid JSON: ${errorMessage(error)}. ${ACCEPTED_FORMS}`)
  }
  if (Array.isArray(document)) return document
  if (isJsonObject(document)) return [document]
  throw new EventsError(` is ${describeJsonType(document)}. ${ACCEPTED_FORMS}`)
}

/** Size and modification time: enough to notice that the file changed between the passes. */
export async function fileVersionOf(path: string): Promise<string> {
  const stats = await reading(stat(path))
  if (!stats.isFile()) throw new EventsError(' is not a file.', 'unreadable')
  return `${stats.size}:${stats.mtimeMs}`
}

export function describeJsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (rawJson.isRawJSON?.(value) === true) return 'a number'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/**
 * A JSON.parse reviver that keeps numbers JavaScript would change (large integers, 1.0, 1e400)
 * as their source text, so that re-serializing the event does not alter its data.
 */
function keepNumbersAsWritten(_key: string, value: unknown, context?: { source?: string }) {
  const source = context?.source
  if (typeof value !== 'number' || source === undefined || String(value) === source) return value
  return rawJson.rawJSON?.(source) ?? value
}

/** The source's bytes, a chunk at a time: a file's chunks share one buffer, reused by each read. */
async function* chunksOf(source: EventSource): AsyncGenerator<Buffer> {
  if (source.kind === 'inline') {
    // Inline text comes as a string: a lone surrogate is its form of invalid UTF-8.
    const bad = source.text.search(LONE_SURROGATE)
    if (bad !== -1) throw notUtf8(source.text.slice(0, bad).split('\n').length)
    yield Buffer.from(source.text, 'utf8')
    return
  }
  const file = await reading(open(source.path, 'r'))
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES)
  try {
    for (;;) {
      const { bytesRead } = await reading(file.read(chunk, 0, chunk.length, null))
      if (bytesRead === 0) return
      yield chunk.subarray(0, bytesRead)
    }
  } finally {
    await file.close()
  }
}

function notUtf8(lineNumber: number): EventsError {
  return new EventsError(
    `, line ${lineNumber}: it is not valid UTF-8. Save the file as UTF-8. Nothing was sent.`
  )
}

function firstInvalidUtf8Line(bytes: Buffer): number {
  let lineNumber = 1
  for (let start = 0; ; lineNumber++) {
    const end = bytes.indexOf(NEWLINE, start)
    if (end === -1 || !isUtf8(bytes.subarray(start, end))) return lineNumber
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
    throw new EventsError(` cannot be read: ${reason}.`, 'unreadable')
  }
}

/**
 * Events for POST /v2/stream: read from the events or events-file input, validated, given ids,
 * cut into NDJSON batches within the service's limits, and sent a few batches at a time.
 *
 * Memory does not grow with the size of an NDJSON file. Pass 1 reads it a chunk at a time,
 * parses and checks each line, and keeps one bit per event: whether it needs a generated id.
 * Pass 2 reads it again and copies each line's bytes into the batch being filled, without
 * parsing it again; at most CONCURRENT_BATCHES batches are in flight. Only the accepted ids are
 * kept. Little is allocated per line and almost nothing outlives its line, which keeps the
 * garbage collector's young generation, and so the process's RSS, small.
 *
 * A JSON document (a pretty-printed object or array) is the exception: it cannot be split into
 * events without parsing all of it, so it is loaded whole, once per pass. That is accepted: such
 * files are written by hand or by small scripts, and large exports are NDJSON.
 */
import { Buffer } from 'node:buffer'
import { randomFillSync } from 'node:crypto'
import { open, readFile, stat, type FileHandle } from 'node:fs/promises'
import { Inputs } from '../action/names.ts'
import { InputError, ServiceError, errorMessage } from '../errors.ts'
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from '../service/client.ts'

/** Event batches in flight at once. */
export const CONCURRENT_BATCHES = 4

/** Where the events come from: the events input's text, or the events-file input's path. */
export type EventSource = { kind: 'inline'; text: string } | { kind: 'file'; path: string }

/** What pass 1 learned about a source, for pass 2. Made by validateEvents. */
export interface ValidatedEvents {
  readonly source: EventSource
  /** How many events the source holds. */
  readonly total: number
  readonly format: 'ndjson' | 'document'
  /** NDJSON: bit i is set when event i has no id of its own. */
  readonly needsId: Uint8Array
  /** A file's size and modification time when it was validated. */
  readonly fileVersion?: string
}

/** One request body for POST /v2/stream. */
export interface EventBatch {
  /** 0-based position, in the input, of the batch's first event. */
  firstPosition: number
  /** The events' ids, in order: the client's own or generated ones. */
  ids: string[]
  /**
   * NDJSON in UTF-8: one event per line, each line ending in "\n". Bytes rather than a string,
   * so that batches in flight live outside the JavaScript heap.
   */
  body: Buffer
  /** body.length */
  bytes: number
  /**
   * Hands the body's memory back for a later batch. Call it once the batch is sent (or has
   * failed for good), and use the body no more; a batch never released is merely not reused.
   */
  release(): void
}

/** One event ready to batch. */
export interface EventLine {
  id: string
  /** The event's JSON on one line, without the newline, in pieces that are written in order. */
  parts: ReadonlyArray<string | Uint8Array>
  /** The line's size in UTF-8 bytes, newline included. */
  bytes: number
}

/** The most a batch may hold: the service's limits unless told (tests use small ones). */
export interface BatchLimits {
  maxEvents: number
  maxBytes: number
}

export interface StreamResult {
  /** How many events the input holds. */
  total: number
  /** The ids the service accepted, kept compactly. */
  accepted: AcceptedIds
  /** The same ids as an array, in input order (made on each read). */
  readonly acceptedIds: string[]
  /** Set when a batch failed: no batch was started after it. */
  failure?: {
    error: unknown
    /** The 1-based positions that were not accepted, e.g. "events 1001–2000, 3001–3500". */
    notSent: string
    acceptedCount: number
  }
}

export interface StreamOptions {
  /** Batches in flight at once; CONCURRENT_BATCHES unless told. */
  concurrency?: number
  /** Called once per accepted batch, e.g. to log progress. */
  onBatch?: (batch: EventBatch, ids: string[]) => void
}

const SERVICE_LIMITS: BatchLimits = {
  maxEvents: MAX_EVENTS_PER_REQUEST,
  maxBytes: MAX_REQUEST_BYTES
}
const ACCEPTED_FORMS =
  'Give one JSON event object, a JSON array of events, or NDJSON (one event object per line).'
/** Pass 1 sizes an event that has no id with this stand-in: randomUUID() has the same length. */
const UUID_PLACEHOLDER = '00000000-0000-0000-0000-000000000000'
/** `{"id":"<uuid>",` replaces an event's opening brace when its id is generated. */
const GENERATED_ID_PREFIX_BYTES = Buffer.byteLength(`{"id":${JSON.stringify(UUID_PLACEHOLDER)},`)
/** Invalid events listed in one error message; the rest are only counted. */
const MAX_LISTED_PROBLEMS = 5

/** Request bodies kept for reuse: one per batch in flight, and the one being filled. */
const MAX_SPARE_BODIES = CONCURRENT_BATCHES + 1

/** How much of a file is read at a time: large, since each read is a trip to the thread pool. */
const READ_CHUNK_BYTES = 1024 * 1024
const NEWLINE = 0x0a
const OPENING_BRACE = 0x7b
/** JSON's whitespace other than "\n": space, tab, carriage return. */
const LINE_PADDING = new Set([0x20, 0x09, 0x0d])
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf])

type EventObject = Record<string, unknown>

/** What was read at one position: a parsed value, or why it could not be parsed. */
type ReadEvent =
  | {
      /** 1-based: the line number (NDJSON) or the event's number (JSON document). */
      at: number
      value: unknown
      /** NDJSON: the line as written, sent verbatim (without its surrounding whitespace). */
      line?: Buffer
    }
  | { at: number; line?: Buffer; problem: string }

/** "line 7" (NDJSON) or "event 3" (JSON document), for messages; made only when needed. */
function labelOf(item: ReadEvent): string {
  return 'line' in item ? `line ${item.at}` : `event ${item.at}`
}

// JSON.rawJSON and JSON.isRawJSON (Node 21+) are not in TypeScript's lib yet.
const rawJson = JSON as JSON & {
  rawJSON?: (text: string) => unknown
  isRawJSON?: (value: unknown) => boolean
}

/**
 * Pass 1: checks every event. Returns what pass 2 needs, or throws an InputError that names the
 * input and the invalid events' positions; then nothing may be sent.
 */
export async function validateEvents(source: EventSource): Promise<ValidatedEvents> {
  const fileVersion = source.kind === 'file' ? await fileVersionOf(source) : undefined
  const needsId = new BitList()
  let total = 0
  let invalid = 0
  const listed: string[] = []
  const reader = new EventReader(source)
  for await (const group of reader.events()) {
    for (const item of group) {
      const checked = checkEvent(item)
      if (checked.problem === undefined) {
        needsId.set(total, checked.needsId)
        total++
        continue
      }
      invalid++
      if (listed.length < MAX_LISTED_PROBLEMS) listed.push(`${labelOf(item)}: ${checked.problem}`)
    }
  }
  const where = describeSource(source)
  if (invalid === 1) {
    throw new InputError(inputOf(source), `${where}, ${listed[0]}. Nothing was sent.`)
  }
  if (invalid > 1) {
    const more = invalid > listed.length ? `; and ${invalid - listed.length} more` : ''
    throw new InputError(
      inputOf(source),
      `${where} has ${invalid} invalid events; nothing was sent. ${listed.join('; ')}${more}.`
    )
  }
  if (total === 0) {
    throw new InputError(inputOf(source), `${where} has no events. ${ACCEPTED_FORMS}`)
  }
  const format = reader.isNdjson ? 'ndjson' : 'document'
  return { source, total, format, needsId: needsId.bytes(), fileVersion }
}

/**
 * Pass 2: reads the source again and yields its batches lazily, one at a time. Each event
 * without an id gets a random UUID here, before any attempt, so a retried batch carries the same
 * ids. Throws an InputError if the file changed since it was validated.
 */
export async function* eventBatches(
  validated: ValidatedEvents,
  limits: BatchLimits = SERVICE_LIMITS
): AsyncGenerator<EventBatch> {
  const { source } = validated
  if (source.kind === 'file' && (await fileVersionOf(source)) !== validated.fileVersion) {
    throw changedError(source, 'it was modified after its events were validated')
  }
  const builder = new BatchBuilder(limits)
  let position = 0
  const lines =
    validated.format === 'ndjson' ? ndjsonLines(validated) : documentLines(validated.source)
  for await (const group of lines) {
    for (const line of group) {
      position++
      const full = builder.add(line)
      if (full !== undefined) yield full
    }
  }
  if (position !== validated.total) {
    throw changedError(source, `it now holds ${position} events instead of ${validated.total}`)
  }
  const last = builder.finish()
  if (last !== undefined) yield last
}

/**
 * Cuts event lines into batches, in order, each as full as the limits allow: at most
 * MAX_EVENTS_PER_REQUEST events and MAX_REQUEST_BYTES bytes per body.
 */
export async function* batchLines(
  lines: Iterable<EventLine> | AsyncIterable<EventLine>,
  limits: BatchLimits = SERVICE_LIMITS
): AsyncGenerator<EventBatch> {
  const builder = new BatchBuilder(limits)
  for await (const line of lines) {
    const full = builder.add(line)
    if (full !== undefined) yield full
  }
  const last = builder.finish()
  if (last !== undefined) yield last
}

/**
 * Validates the whole source (unless given what validateEvents returned), then sends its batches
 * with at most `concurrency` in flight, pulling each from the source only when a slot is free.
 * Throws only when the input is invalid (nothing sent); a batch that fails ends the stream: no
 * batch is started after it, the ones in flight finish, and the result says which events were
 * accepted and which were not.
 */
export async function streamEvents(
  events: EventSource | ValidatedEvents,
  sendBatch: (batch: EventBatch) => Promise<string[]>,
  options: StreamOptions = {}
): Promise<StreamResult> {
  const validated = 'total' in events ? events : await validateEvents(events)
  const { total } = validated
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? CONCURRENT_BATCHES))
  const batches = eventBatches(validated)
  const accepted = new AcceptedIds()
  let failure: { error: unknown } | undefined

  const sendUntilDoneOrFailed = async (): Promise<void> => {
    while (failure === undefined) {
      let next: IteratorResult<EventBatch>
      try {
        next = await batches.next()
      } catch (error) {
        failure ??= { error }
        return
      }
      // Another batch may have failed while this one was being read: then it is not started.
      if (next.done || failure !== undefined) return
      const batch = next.value
      try {
        const ids = await sendBatch(batch)
        if (ids.length !== batch.ids.length) throw idCountMismatch(batch, ids.length)
        accepted.add(batch.firstPosition, ids)
        options.onBatch?.(batch, ids)
      } catch (error) {
        failure ??= { error }
      } finally {
        batch.release()
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: concurrency }, sendUntilDoneOrFailed))
  } finally {
    await batches.return(undefined)
  }

  const result: StreamResult = {
    total,
    accepted,
    get acceptedIds() {
      return accepted.toArray()
    }
  }
  if (failure === undefined) return result
  result.failure = {
    error: failure.error,
    notSent: describePositions(missingRanges(accepted.batches(), total)),
    acceptedCount: accepted.count
  }
  return result
}

/**
 * The ids the service accepted, batch by batch, each batch's ids kept as JSON array elements in
 * one buffer. 100,000 ids as JavaScript strings would be ~6 MB that the garbage collector copies
 * between generations, and that make V8 grow its young generation: ~20 MB more peak memory.
 */
export class AcceptedIds {
  private readonly parts: Array<{ firstPosition: number; count: number; json: Buffer }> = []
  private sorted = true
  count = 0

  add(firstPosition: number, ids: readonly string[]): void {
    const last = this.parts[this.parts.length - 1]
    if (last !== undefined && last.firstPosition > firstPosition) this.sorted = false
    const json = Buffer.from(ids.map(id => JSON.stringify(id)).join(','), 'utf8')
    this.parts.push({ firstPosition, count: ids.length, json })
    this.count += ids.length
  }

  /** The accepted batches' positions, in input order. */
  batches(): ReadonlyArray<{ firstPosition: number; count: number }> {
    if (!this.sorted) {
      this.parts.sort((a, b) => a.firstPosition - b.firstPosition)
      this.sorted = true
    }
    return this.parts
  }

  /** The ids as one JSON array, a line per batch (JSON allows a newline between elements). */
  *jsonLines(): Generator<string> {
    const parts = this.batches() as typeof this.parts
    if (parts.length === 0) yield '[]'
    for (let i = 0; i < parts.length; i++) {
      const open = i === 0 ? '[' : ''
      const close = i === parts.length - 1 ? ']' : ','
      yield `${open}${parts[i].json.toString('utf8')}${close}`
    }
  }

  toArray(): string[] {
    return JSON.parse([...this.jsonLines()].join('\n')) as string[]
  }
}

/** One line for humans, e.g. "Sent 2000 of 2100 events; events 2001–2100 were not accepted: …". */
export function describePartialFailure(result: StreamResult): string {
  const { total, failure } = result
  if (failure === undefined) return `Sent all ${total} events.`
  const reason = errorMessage(failure.error)
  const notAccepted = total - failure.acceptedCount
  if (notAccepted === 0) return `Sent all ${total} events, then: ${reason}`
  const verb = notAccepted === 1 ? 'was' : 'were'
  return `Sent ${failure.acceptedCount} of ${total} events; ${failure.notSent} ${verb} not accepted: ${reason}`
}

/**
 * 0-based, end-exclusive ranges as 1-based positions: [[1000, 2000], [4, 5]] →
 * "events 1001–2000, 5". A single position reads "event 5"; no positions read "no events".
 */
export function describePositions(ranges: ReadonlyArray<readonly [number, number]>): string {
  const nonEmpty = ranges.filter(([start, end]) => end > start)
  const count = nonEmpty.reduce((sum, [start, end]) => sum + end - start, 0)
  if (count === 0) return 'no events'
  const parts = nonEmpty.map(([start, end]) =>
    end - start === 1 ? `${start + 1}` : `${start + 1}–${end}`
  )
  return `${count === 1 ? 'event' : 'events'} ${parts.join(', ')}`
}

/** The fields of an event in the service's interface; the service refuses others. */
const EVENT_FIELDS = new Set(['id', 'name', 'data'])

function hasOtherFields(event: EventObject): boolean {
  for (const field in event) if (!EVENT_FIELDS.has(field)) return true
  return false
}

/** What is wrong with one event, or undefined when it can be sent. */
function eventProblem(value: unknown): string | undefined {
  if (!isEventObject(value)) return `it is ${describeJsonType(value)}, not an event object`
  if (!Object.hasOwn(value, 'name')) return 'it has no "name" (a non-empty string is required)'
  if (typeof value.name !== 'string') {
    return `"name" is ${describeJsonType(value.name)}; it must be a non-empty string`
  }
  if (value.name === '') return '"name" is empty; it must be a non-empty string'
  if (!Object.hasOwn(value, 'data') || value.data === undefined) {
    return 'it has no "data" (a JSON value other than null is required)'
  }
  if (value.data === null) return '"data" is null; it must be a JSON value other than null'
  if (hasOtherFields(value)) {
    const unknown = Object.keys(value).filter(field => !EVENT_FIELDS.has(field))
    return `it has ${unknown.map(field => JSON.stringify(field).slice(0, 40)).join(', ')}: an event has only "id", "name" and "data" (put anything else inside "data")`
  }
  if (Object.hasOwn(value, 'id')) {
    if (typeof value.id !== 'string') {
      return `"id" is ${describeJsonType(value.id)}; give a non-empty string, or leave it out to get a generated id`
    }
    if (value.id === '') {
      return '"id" is empty; give a non-empty string, or leave it out to get a generated id'
    }
  }
  return undefined
}

/** Pass 1's verdict on one event: what is wrong with it, or whether it needs an id. */
function checkEvent(
  item: ReadEvent
): { problem: string } | { problem?: undefined; needsId: boolean } {
  if ('problem' in item) return item
  const problem = eventProblem(item.value)
  if (problem !== undefined) return { problem }
  const event = item.value as EventObject
  const needsId = typeof event.id !== 'string'
  const bytes =
    item.line === undefined
      ? documentLine(event, needsId ? UUID_PLACEHOLDER : undefined).bytes
      : ndjsonLineBytes(item.line, needsId)
  if (bytes > MAX_REQUEST_BYTES) {
    const withId = needsId ? ' with its generated id' : ''
    return {
      problem: `it is ${bytes} bytes as an NDJSON line${withId}, over the service's limit of ${MAX_REQUEST_BYTES} bytes per request`
    }
  }
  return { needsId }
}

/** What ndjsonLine(line, …).bytes will be, computed without building the line (pass 1 is hot). */
function ndjsonLineBytes(line: Buffer, idIsGenerated: boolean): number {
  return idIsGenerated ? GENERATED_ID_PREFIX_BYTES + line.length : line.length + 1
}

/**
 * An NDJSON line as it will be sent: as written, so that every value reaches the service exactly
 * as the user wrote it, with the id first when it is a generated one.
 */
function ndjsonLine(line: Buffer, id: string, idIsGenerated: boolean): EventLine {
  if (!idIsGenerated) return { id, parts: [line], bytes: line.length + 1 }
  // A valid event is an object with a name, so its text is "{" followed by at least one member.
  // A generated id is a UUID: plain ASCII, nothing to escape, GENERATED_ID_PREFIX_BYTES long.
  const rest = line.subarray(1)
  return {
    id,
    parts: ['{"id":"', id, '",', rest],
    bytes: GENERATED_ID_PREFIX_BYTES + rest.length + 1
  }
}

/** An event of a JSON document as a line, with `generatedId` first when given. */
function documentLine(event: EventObject, generatedId?: string): EventLine {
  const json = JSON.stringify(generatedId === undefined ? event : { id: generatedId, ...event })
  const id = generatedId ?? (event.id as string)
  return { id, parts: [json], bytes: Buffer.byteLength(json) + 1 }
}

/**
 * Pass 2's NDJSON lines, from bytes: an event with its own id is parsed for that id, and any
 * other is not parsed at all, only given a generated id.
 */
async function* ndjsonLines(validated: ValidatedEvents): AsyncGenerator<Iterable<EventLine>> {
  const { source, needsId, total } = validated
  let lineNumber = 0
  let position = 0
  function* linesOf(group: Iterable<Buffer>): Generator<EventLine> {
    for (const line of group) {
      lineNumber++
      if (line.length === 0) continue
      if (position >= total) {
        throw changedError(source, `it now holds more than the ${total} events validated`)
      }
      if (!BitList.get(needsId, position++)) {
        const event: unknown = parseOrUndefined(line.toString('utf8'))
        if (!isEventObject(event) || typeof event.id !== 'string') {
          throw changedError(source, `line ${lineNumber} is no longer what was validated`)
        }
        yield ndjsonLine(line, event.id, false)
      } else if (line[0] === OPENING_BRACE) {
        yield ndjsonLine(line, newEventId(), true)
      } else {
        throw changedError(source, `line ${lineNumber} is no longer what was validated`)
      }
    }
  }
  for await (const group of readLines(source)) yield linesOf(group)
}

/** Pass 2's events of a JSON document: parsed again and serialized. */
async function* documentLines(source: EventSource): AsyncGenerator<Iterable<EventLine>> {
  const lines: EventLine[] = []
  for (const item of documentEvents(source, await readWhole(source))) {
    if ('problem' in item || eventProblem(item.value) !== undefined) {
      throw changedError(source, `${labelOf(item)} is no longer what was validated`)
    }
    const event = item.value as EventObject
    lines.push(documentLine(event, typeof event.id === 'string' ? undefined : newEventId()))
  }
  yield lines
}

/**
 * Random (version 4) UUIDs, made for throughput: 100,000 events need 100,000 ids.
 *
 * randomUUID() builds its result by concatenating pieces, which V8 keeps as a tree of ~500 bytes
 * instead of a flat string of ~70, and flattening it costs another buffer round trip. Here the
 * random bytes come from one pool, are written as hex into a scratch buffer, and become one flat
 * string: far less garbage for the collector, and ids that are cheap to hold until sent.
 */
class EventIdGenerator {
  private static readonly HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1')
  /** Where each of the 16 bytes goes in "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx". */
  private static readonly OFFSETS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]
  private readonly pool = Buffer.allocUnsafe(16 * 256)
  private used = this.pool.length
  private readonly scratch = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1')

  next(): string {
    if (this.used === this.pool.length) {
      randomFillSync(this.pool)
      this.used = 0
    }
    const bytes = this.pool.subarray(this.used, this.used + 16)
    this.used += 16
    bytes[6] = (bytes[6] & 0x0f) | 0x40 // version 4
    bytes[8] = (bytes[8] & 0x3f) | 0x80 // RFC 4122 variant
    const { HEX_DIGITS, OFFSETS } = EventIdGenerator
    for (let i = 0; i < 16; i++) {
      this.scratch[OFFSETS[i]] = HEX_DIGITS[bytes[i] >> 4]
      this.scratch[OFFSETS[i] + 1] = HEX_DIGITS[bytes[i] & 0x0f]
    }
    return this.scratch.toString('latin1')
  }
}

const eventIds = new EventIdGenerator()

/** A new random UUID for an event that has no id of its own. */
export function newEventId(): string {
  return eventIds.next()
}

/**
 * Builds batches line by line, straight into a request body. Bodies come from a small pool and go
 * back to it when their batch is released, so a long stream reuses the same few megabytes
 * instead of leaving a trail of bodies for the garbage collector (they live outside the heap, so
 * V8 collects them late, and the process's RSS would grow with the number of batches).
 */
class BatchBuilder {
  private readonly limits: BatchLimits
  private readonly spareBodies: Buffer[] = []
  private buffer: Buffer
  private ids: string[] = []
  private bytes = 0
  private firstPosition = 0

  constructor(limits: BatchLimits) {
    this.limits = limits
    this.buffer = this.takeBody()
  }

  private takeBody(): Buffer {
    return this.spareBodies.pop() ?? Buffer.allocUnsafeSlow(this.limits.maxBytes)
  }

  /** Adds a line; returns the batch it completed when the line did not fit in that one. */
  add(line: EventLine): EventBatch | undefined {
    if (line.bytes > this.limits.maxBytes) {
      throw new Error(
        `An event of ${line.bytes} bytes cannot fit in a request of at most ${this.limits.maxBytes} bytes.`
      )
    }
    const full =
      this.ids.length === this.limits.maxEvents || this.bytes + line.bytes > this.limits.maxBytes
        ? this.finish()
        : undefined
    let end = this.bytes
    for (const part of line.parts) {
      if (typeof part === 'string') {
        end += this.buffer.write(part, end)
      } else {
        this.buffer.set(part, end)
        end += part.length
      }
    }
    if (end + 1 - this.bytes !== line.bytes) {
      throw new Error(
        `An event line said it was ${line.bytes} bytes but is ${end + 1 - this.bytes}.`
      )
    }
    this.buffer[end] = NEWLINE
    this.bytes = end + 1
    this.ids.push(line.id)
    return full
  }

  /** The batch being filled, if it holds any event; the next one starts after it. */
  finish(): EventBatch | undefined {
    if (this.ids.length === 0) return undefined
    const body = this.buffer
    let released = false
    const batch: EventBatch = {
      firstPosition: this.firstPosition,
      ids: this.ids,
      body: body.subarray(0, this.bytes),
      bytes: this.bytes,
      release: () => {
        if (released || this.spareBodies.length >= MAX_SPARE_BODIES) return
        released = true
        this.spareBodies.push(body)
      }
    }
    this.buffer = this.takeBody()
    this.firstPosition += this.ids.length
    this.ids = []
    this.bytes = 0
    return batch
  }
}

/**
 * Reads a source's events for pass 1, in groups (one per chunk of the file), each read lazily: a
 * group must be iterated to its end before the next is pulled.
 *
 * The format is told by content: when the first non-blank line is a complete JSON value other
 * than an array, the source is NDJSON (one event per line; blank lines skipped but counted);
 * otherwise it is one JSON document, an event object or an array of them.
 */
class EventReader {
  /** Undefined until the first non-blank line has told the format. */
  isNdjson?: boolean
  private readonly source: EventSource
  private lineNumber = 0

  constructor(source: EventSource) {
    this.source = source
  }

  async *events(): AsyncGenerator<Iterable<ReadEvent>> {
    for await (const lines of readLines(this.source)) {
      yield this.ndjsonEvents(lines)
      if (this.isNdjson === false) break
    }
    if (this.isNdjson === false) {
      yield documentEvents(this.source, await readWhole(this.source))
    }
  }

  private *ndjsonEvents(lines: Iterable<Buffer>): Generator<ReadEvent> {
    for (const line of lines) {
      this.lineNumber++
      if (line.length === 0) continue
      let value: unknown
      try {
        value = JSON.parse(line.toString('utf8'))
      } catch (error) {
        if (this.isNdjson === undefined) {
          this.isNdjson = false
          return
        }
        yield {
          at: this.lineNumber,
          line,
          problem: `it is not valid JSON (${errorMessage(error)})`
        }
        continue
      }
      if (this.isNdjson === undefined) {
        this.isNdjson = !Array.isArray(value)
        if (!this.isNdjson) return
      }
      yield { at: this.lineNumber, value, line }
    }
  }
}

/** The events of one JSON document: an event object or an array of them. */
function documentEvents(source: EventSource, text: string): ReadEvent[] {
  let document: unknown
  try {
    document = JSON.parse(stripBom(text), keepNumbersAsWritten)
  } catch (error) {
    throw new InputError(
      inputOf(source),
      `${describeSource(source)} is not valid JSON: ${errorMessage(error)}. ${ACCEPTED_FORMS}`
    )
  }
  if (Array.isArray(document)) {
    return document.map((value: unknown, index) => ({ at: index + 1, value }))
  }
  if (isEventObject(document)) return [{ at: 1, value: document }]
  throw new InputError(
    inputOf(source),
    `${describeSource(source)} is ${describeJsonType(document)}. ${ACCEPTED_FORMS}`
  )
}

/**
 * A JSON.parse reviver that keeps numbers JavaScript would change (large integers, 1.0, 1e400)
 * as their source text, so that re-serializing the event does not alter its data.
 */
function keepNumbersAsWritten(_key: string, value: unknown, context?: { source?: string }) {
  const source = context?.source
  if (typeof value !== 'number' || source === undefined || rawJson.rawJSON === undefined) {
    return value
  }
  return String(value) === source ? value : rawJson.rawJSON(source)
}

/**
 * The source's lines as bytes, split on "\n" and stripped of surrounding JSON whitespace (so of
 * the "\r" of CRLF) and, on the first line, of a byte order mark. They come in groups, one per
 * chunk of a file, each split lazily: a group must be iterated to its end before the next is
 * pulled. Only the chunk being read and a line that spans chunks are held.
 */
async function* readLines(source: EventSource): AsyncGenerator<Iterable<Buffer>> {
  const splitter = new LineSplitter()
  if (source.kind === 'inline') {
    yield splitter.linesOf(Buffer.from(source.text, 'utf8'))
    yield splitter.rest()
    return
  }
  let file: FileHandle
  try {
    file = await open(source.path, 'r')
  } catch (error) {
    throw readError(source, error)
  }
  // One buffer, reused for every chunk: its lines are used up before the next read.
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES)
  try {
    for (;;) {
      const bytesRead = await readChunk(file, chunk, source)
      if (bytesRead === 0) break
      yield splitter.linesOf(chunk.subarray(0, bytesRead))
    }
  } finally {
    await file.close()
  }
  yield splitter.rest()
}

async function readChunk(file: FileHandle, chunk: Buffer, source: EventSource): Promise<number> {
  try {
    return (await file.read(chunk, 0, chunk.length, null)).bytesRead
  } catch (error) {
    throw readError(source, error)
  }
}

class LineSplitter {
  /** The start of a line that continues in later chunks, in pieces: joined once, when it ends. */
  private pending: Buffer[]
  private isFirstLine: boolean

  constructor() {
    this.pending = []
    this.isFirstLine = true
  }

  *linesOf(chunk: Buffer): Generator<Buffer> {
    let start = 0
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (this.pending.length === 0) {
        yield this.trim(chunk.subarray(start, end))
      } else {
        this.pending.push(chunk.subarray(start, end))
        const line = Buffer.concat(this.pending)
        this.pending = []
        yield this.trim(line)
      }
      start = end + 1
    }
    // Copied: the chunk's buffer is reused for the next read.
    if (start < chunk.length) this.pending.push(Buffer.from(chunk.subarray(start)))
  }

  /** The last line, when the source does not end with a newline. */
  *rest(): Generator<Buffer> {
    if (this.pending.length > 0) yield this.trim(Buffer.concat(this.pending))
    this.pending = []
  }

  private trim(line: Buffer): Buffer {
    let start = 0
    if (this.isFirstLine) {
      this.isFirstLine = false
      if (line.subarray(0, UTF8_BOM.length).equals(UTF8_BOM)) start = UTF8_BOM.length
    }
    let end = line.length
    while (start < end && LINE_PADDING.has(line[start])) start++
    while (end > start && LINE_PADDING.has(line[end - 1])) end--
    return start === 0 && end === line.length ? line : line.subarray(start, end)
  }
}

/** A growable list of bits, one per event. */
class BitList {
  private data = new Uint8Array(64)

  set(index: number, value: boolean): void {
    const byte = index >> 3
    if (byte >= this.data.length) {
      const grown = new Uint8Array(Math.max(this.data.length * 2, byte + 1))
      grown.set(this.data)
      this.data = grown
    }
    if (value) this.data[byte] |= 1 << (index & 7)
  }

  bytes(): Uint8Array {
    return this.data
  }

  static get(bits: Uint8Array, index: number): boolean {
    return ((bits[index >> 3] ?? 0) & (1 << (index & 7))) !== 0
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

async function readWhole(source: EventSource): Promise<string> {
  if (source.kind === 'inline') return source.text
  try {
    return await readFile(source.path, 'utf8')
  } catch (error) {
    throw readError(source, error)
  }
}

/** Size and modification time: enough to notice that the file changed between the passes. */
async function fileVersionOf(source: EventSource & { kind: 'file' }): Promise<string> {
  let stats: Awaited<ReturnType<typeof stat>>
  try {
    stats = await stat(source.path)
  } catch (error) {
    throw readError(source, error)
  }
  if (!stats.isFile()) {
    throw new InputError(Inputs.EventsFile, `${describeSource(source)} is not a file.`)
  }
  return `${stats.size}:${stats.mtimeMs}`
}

function readError(source: EventSource, error: unknown): InputError {
  const code = (error as { code?: unknown } | undefined)?.code
  const reason =
    code === 'ENOENT'
      ? 'there is no such file'
      : code === 'EACCES'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory'
          : errorMessage(error)
  return new InputError(inputOf(source), `${describeSource(source)} cannot be read: ${reason}.`)
}

function changedError(source: EventSource, what: string): InputError {
  return new InputError(
    inputOf(source),
    `${describeSource(source)} changed while its events were being sent: ${what}. Make sure nothing writes to it during this step.`
  )
}

function idCountMismatch(batch: EventBatch, received: number): ServiceError {
  const positions = describePositions([
    [batch.firstPosition, batch.firstPosition + batch.ids.length]
  ])
  return new ServiceError(
    `POST /v2/stream answered ${received} ids for a batch of ${batch.ids.length} events (${positions}), so which of them were accepted is unknown.`,
    { call: 'POST /v2/stream', kind: 'protocol' }
  )
}

/** The gaps between accepted batches (sorted by position) in [0, total), end-exclusive. */
function missingRanges(
  accepted: ReadonlyArray<{ firstPosition: number; count: number }>,
  total: number
): Array<[number, number]> {
  const ranges: Array<[number, number]> = []
  let next = 0
  for (const batch of accepted) {
    if (batch.firstPosition > next) ranges.push([next, batch.firstPosition])
    next = batch.firstPosition + batch.count
  }
  if (next < total) ranges.push([next, total])
  return ranges
}

function inputOf(source: EventSource): string {
  return source.kind === 'file' ? Inputs.EventsFile : Inputs.Events
}

function describeSource(source: EventSource): string {
  return source.kind === 'file'
    ? `Input ${Inputs.EventsFile} ("${source.path}")`
    : `Input ${Inputs.Events}`
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

function isEventObject(value: unknown): value is EventObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    rawJson.isRawJSON?.(value) !== true
  )
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'missing'
  if (Array.isArray(value)) return 'an array'
  if (rawJson.isRawJSON?.(value) === true) return 'a number'
  switch (typeof value) {
    case 'string':
      return 'a string'
    case 'number':
      return 'a number'
    case 'boolean':
      return 'a boolean'
    default:
      return 'an object'
  }
}

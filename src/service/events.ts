/**
 * Events for POST /v2/stream: read from the events or events-file input, validated, given ids,
 * cut into NDJSON batches within the service's limits, and sent a few batches at a time.
 *
 * Memory does not grow with the size of an NDJSON file: a first pass validates it line by line,
 * a second reads it again and yields one batch at a time, and at most CONCURRENT_BATCHES batches
 * are in flight. Only the accepted ids are kept. A JSON document (a pretty-printed object or
 * array) is the exception: it cannot be split into events without parsing all of it, so it is
 * loaded whole, once per pass. That is accepted: such files are written by hand or by small
 * scripts, and large exports are NDJSON.
 */
import { Buffer } from 'node:buffer'
import { randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { Readable } from 'node:stream'
import {
  CONCURRENT_BATCHES,
  Inputs,
  MAX_EVENTS_PER_REQUEST,
  MAX_REQUEST_BYTES
} from '../constants.ts'
import { InputError, ServiceError, errorMessage } from '../errors.ts'

/** Where the events come from: the events input's text, or the events-file input's path. */
export type EventSource = { kind: 'inline'; text: string } | { kind: 'file'; path: string }

/** One request body for POST /v2/stream. */
export interface EventBatch {
  /** 0-based position, in the input, of the batch's first event. */
  firstPosition: number
  /** The events' ids, in order: the client's own or generated ones. */
  ids: string[]
  /** NDJSON: one event per line, each line ending in "\n". */
  body: string
  /** The body's size in UTF-8 bytes. */
  bytes: number
}

/** One event ready to send. */
export interface EventLine {
  id: string
  /** The event as one line of NDJSON, "\n" included. */
  text: string
  /** The line's size in UTF-8 bytes. */
  bytes: number
}

export interface StreamResult {
  /** How many events the input holds. */
  total: number
  /** The ids the service accepted, in input order. */
  acceptedIds: string[]
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

const ACCEPTED_FORMS =
  'Give one JSON event object, a JSON array of events, or NDJSON (one event object per line).'
/** Pass 1 sizes an event that has no id with this stand-in: randomUUID() has the same length. */
const UUID_PLACEHOLDER = '00000000-0000-0000-0000-000000000000'
/** Invalid events listed in one error message; the rest are only counted. */
const MAX_LISTED_PROBLEMS = 5

type EventObject = Record<string, unknown>

/** What was read at one position: a parsed value, or why it could not be parsed. */
type ReadEvent =
  | {
      /** "line 7" (NDJSON) or "event 3" (JSON document), for messages. */
      label: string
      value: unknown
      /** The event's JSON text as given (NDJSON), sent verbatim; absent for JSON documents. */
      json?: string
    }
  | { label: string; problem: string }

/** A valid event ready to batch, or what is wrong with it. */
type CheckedEvent = { label: string; line: EventLine } | { label: string; problem: string }

// JSON.rawJSON and JSON.isRawJSON (Node 21+) are not in TypeScript's lib yet.
const rawJson = JSON as JSON & {
  rawJSON?: (text: string) => unknown
  isRawJSON?: (value: unknown) => boolean
}

/**
 * Pass 1: checks every event without keeping any. Returns how many there are, or throws an
 * InputError that names the input and the invalid events' positions.
 */
export async function validateEvents(source: EventSource): Promise<number> {
  let count = 0
  let invalid = 0
  const listed: string[] = []
  for await (const item of checkedEvents(source, () => UUID_PLACEHOLDER)) {
    if ('line' in item) {
      count++
      continue
    }
    invalid++
    if (listed.length < MAX_LISTED_PROBLEMS) listed.push(`${item.label}: ${item.problem}`)
  }
  if (invalid === 1) {
    throw new InputError(
      inputOf(source),
      `${describeSource(source)}, ${listed[0]}. Nothing was sent.`
    )
  }
  if (invalid > 1) {
    const more = invalid > listed.length ? `; and ${invalid - listed.length} more` : ''
    throw new InputError(
      inputOf(source),
      `${describeSource(source)} has ${invalid} invalid events; nothing was sent. ${listed.join('; ')}${more}.`
    )
  }
  if (count === 0) {
    throw new InputError(
      inputOf(source),
      `${describeSource(source)} has no events. ${ACCEPTED_FORMS}`
    )
  }
  return count
}

/**
 * Pass 2: reads the source again and yields its batches lazily, one at a time. Each event
 * without an id gets a random UUID here, before any attempt, so a retried batch carries the same
 * ids. Throws on the first invalid event: validateEvents should have run first, but the file
 * may have changed since.
 */
export async function* eventBatches(source: EventSource): AsyncGenerator<EventBatch> {
  yield* batchLines(validLines(source))
}

/**
 * Cuts event lines into batches, in order, each as full as the limits allow: at most
 * MAX_EVENTS_PER_REQUEST events and MAX_REQUEST_BYTES bytes per body.
 */
export async function* batchLines(
  lines: Iterable<EventLine> | AsyncIterable<EventLine>
): AsyncGenerator<EventBatch> {
  let texts: string[] = []
  let ids: string[] = []
  let bytes = 0
  let firstPosition = 0
  for await (const line of lines) {
    if (line.bytes > MAX_REQUEST_BYTES) {
      throw new Error(
        `An event of ${line.bytes} bytes cannot fit in a request of at most ${MAX_REQUEST_BYTES} bytes.`
      )
    }
    if (ids.length === MAX_EVENTS_PER_REQUEST || bytes + line.bytes > MAX_REQUEST_BYTES) {
      yield { firstPosition, ids, body: texts.join(''), bytes }
      firstPosition += ids.length
      texts = []
      ids = []
      bytes = 0
    }
    texts.push(line.text)
    ids.push(line.id)
    bytes += line.bytes
  }
  if (ids.length > 0) yield { firstPosition, ids, body: texts.join(''), bytes }
}

/**
 * Validates the whole source, then sends its batches with at most `concurrency` in flight,
 * pulling each from the source only when a slot is free. Throws only when the input is invalid
 * (nothing sent); a batch that fails ends the stream: no batch is started after it, the ones in
 * flight finish, and the result says which events were accepted and which were not.
 */
export async function streamEvents(
  source: EventSource,
  sendBatch: (batch: EventBatch) => Promise<string[]>,
  options: StreamOptions = {}
): Promise<StreamResult> {
  const total = await validateEvents(source)
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? CONCURRENT_BATCHES))
  const batches = eventBatches(source)
  const accepted: Array<{ firstPosition: number; ids: string[] }> = []
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
        accepted.push({ firstPosition: batch.firstPosition, ids })
        options.onBatch?.(batch, ids)
      } catch (error) {
        failure ??= { error }
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: concurrency }, sendUntilDoneOrFailed))
  } finally {
    await batches.return(undefined)
  }

  accepted.sort((a, b) => a.firstPosition - b.firstPosition)
  const acceptedIds = accepted.flatMap(batch => batch.ids)
  if (failure === undefined) return { total, acceptedIds }
  return {
    total,
    acceptedIds,
    failure: {
      error: failure.error,
      notSent: describePositions(missingRanges(accepted, total)),
      acceptedCount: acceptedIds.length
    }
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

/** What is wrong with one event, or undefined when it can be sent. */
export function eventProblem(value: unknown): string | undefined {
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

/** Pass 2's events: throws on the first invalid one, else yields ready lines. */
async function* validLines(source: EventSource): AsyncGenerator<EventLine> {
  for await (const item of checkedEvents(source, randomUUID)) {
    if ('problem' in item) {
      throw new InputError(
        inputOf(source),
        `${describeSource(source)}, ${item.label}: ${item.problem}.`
      )
    }
    yield item.line
  }
}

/** Every event of the source, checked and, when valid, turned into its NDJSON line. */
async function* checkedEvents(
  source: EventSource,
  newId: () => string
): AsyncGenerator<CheckedEvent> {
  for await (const item of readEvents(source)) {
    if ('problem' in item) {
      yield item
      continue
    }
    const problem = eventProblem(item.value)
    if (problem !== undefined) {
      yield { label: item.label, problem }
      continue
    }
    const event = item.value as EventObject
    const ownId = typeof event.id === 'string' ? event.id : undefined
    const id = ownId ?? newId()
    const text = `${eventJson(event, item.json, ownId === undefined ? id : undefined)}\n`
    const bytes = Buffer.byteLength(text)
    if (bytes > MAX_REQUEST_BYTES) {
      yield {
        label: item.label,
        problem: `it is ${bytes} bytes as an NDJSON line${ownId === undefined ? ' with its generated id' : ''}, over the service's limit of ${MAX_REQUEST_BYTES} bytes per request`
      }
      continue
    }
    yield { label: item.label, line: { id, text, bytes } }
  }
}

/**
 * The event's JSON, with `addedId` first when given. NDJSON lines are kept as written, so that
 * every value reaches the service exactly as the user wrote it.
 */
function eventJson(event: EventObject, json: string | undefined, addedId: string | undefined) {
  if (json === undefined)
    return JSON.stringify(addedId === undefined ? event : { id: addedId, ...event })
  if (addedId === undefined) return json
  // A valid event is an object with a name, so its text is "{" followed by at least one member.
  return `{"id":${JSON.stringify(addedId)},${json.slice(1)}`
}

/**
 * The source's events in order. The format is told by content: when the first non-blank line
 * is a complete JSON value other than an array, the source is NDJSON (one event per line, blank
 * lines skipped but counted); otherwise it is one JSON document, an event object or an array.
 */
async function* readEvents(source: EventSource): AsyncGenerator<ReadEvent> {
  let lineNumber = 0
  let isNdjson: boolean | undefined
  for await (const rawLine of readLines(source)) {
    lineNumber++
    const line = (lineNumber === 1 ? stripBom(rawLine) : rawLine).trim()
    if (line === '') continue
    const label = `line ${lineNumber}`
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      if (isNdjson === undefined) {
        isNdjson = false
        break
      }
      yield { label, problem: `it is not valid JSON (${errorMessage(error)})` }
      continue
    }
    if (isNdjson === undefined) {
      isNdjson = !Array.isArray(value)
      if (!isNdjson) break
    }
    yield { label, value, json: line }
  }
  if (isNdjson === false) yield* documentEvents(source, await readWhole(source))
}

/** The events of one JSON document: an event object or an array of them. */
function* documentEvents(source: EventSource, text: string): Generator<ReadEvent> {
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
    for (const [index, value] of document.entries()) yield { label: `event ${index + 1}`, value }
  } else if (isEventObject(document)) {
    yield { label: 'event 1', value: document }
  } else {
    throw new InputError(
      inputOf(source),
      `${describeSource(source)} is ${describeJsonType(document)}. ${ACCEPTED_FORMS}`
    )
  }
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

/** The source's lines, streamed: a file is never held whole. CRLF, LF and a missing last EOL. */
async function* readLines(source: EventSource): AsyncGenerator<string> {
  if (source.kind === 'file') await assertReadableFile(source.path)
  const input =
    source.kind === 'file'
      ? createReadStream(source.path, { encoding: 'utf8' })
      : Readable.from([source.text])
  const lines = createInterface({ input, crlfDelay: Infinity })
  try {
    yield* lines
  } catch (error) {
    throw readError(source, error)
  } finally {
    lines.close()
    input.destroy()
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

async function assertReadableFile(path: string): Promise<void> {
  const source: EventSource = { kind: 'file', path }
  let isFile: boolean
  try {
    isFile = (await stat(path)).isFile()
  } catch (error) {
    throw readError(source, error)
  }
  if (!isFile) throw new InputError(Inputs.EventsFile, `${describeSource(source)} is not a file.`)
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
  accepted: ReadonlyArray<{ firstPosition: number; ids: string[] }>,
  total: number
): Array<[number, number]> {
  const ranges: Array<[number, number]> = []
  let next = 0
  for (const batch of accepted) {
    if (batch.firstPosition > next) ranges.push([next, batch.firstPosition])
    next = batch.firstPosition + batch.ids.length
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

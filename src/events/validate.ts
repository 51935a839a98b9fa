/**
 * Pass 1: every event is read and checked before anything is sent. What pass 2 needs is kept in
 * little memory: one bit per event (whether it needs a generated id) and the ids seen, to refuse
 * duplicates.
 *
 * The format is told by content: when the first non-blank line is a complete JSON value other
 * than an array, the source is NDJSON (one event per line; blank lines skipped but counted);
 * otherwise it is one JSON document, an event object or an array of them.
 */
import { Buffer, isUtf8 } from 'node:buffer'
import { MAX_JSON_DEPTH, exceedsJsonDepth } from '../json.ts'
import { MAX_REQUEST_BYTES } from '../service/client.ts'
import { plural } from '../text.ts'
import { ACCEPTED_FORMS, documentEvents } from './document.ts'
import {
  UUID_PLACEHOLDER,
  documentLine,
  eventProblem,
  lineParseError,
  ndjsonLineBytes,
  type EventObject
} from './event.ts'
import {
  EventsError,
  describePosition,
  type EventPosition,
  type EventProblem
} from './events-error.ts'
import { LineTooLong, MAX_LINE_BYTES, fileVersionOf, readDocument, readLines } from './source.ts'
import type { EventSource } from './source.ts'

/** What pass 1 learned about a source, for pass 2. Made by validateEvents. */
export interface ValidatedEvents {
  readonly source: EventSource
  /** How many events the source holds. */
  readonly total: number
  readonly format: 'ndjson' | 'document'
  /** Bit i is set when event i has no id of its own. */
  readonly needsId: Uint8Array
  /** A file's size and modification time when it was validated. */
  readonly fileVersion?: string
}

/** Invalid events listed in one error message; the rest are only counted. */
const MAX_LISTED_PROBLEMS = 5
const OPENING_BRACKET = 0x5b

/** What was read at one position: a parsed value, or why it could not be read. */
type ReadEvent =
  | {
      position: EventPosition
      value: unknown
      /** NDJSON: the line as written (without its surrounding whitespace). */
      line?: Buffer
    }
  | { position: EventPosition; problem: string }

/**
 * Checks every event. Returns what pass 2 needs, or throws an EventsError that names the invalid
 * events' positions; then nothing may be sent.
 */
export async function validateEvents(source: EventSource): Promise<ValidatedEvents> {
  const fileVersion = source.kind === 'file' ? await fileVersionOf(source.path) : undefined
  const needsId = new BitList()
  const idPositions = new Map<string, EventPosition>()
  let total = 0
  let invalid = 0
  const listed: EventProblem[] = []
  const reader = new EventReader(source)
  for await (const group of reader.events()) {
    for (const item of group) {
      const problem = 'problem' in item ? item.problem : checkEvent(item, idPositions)
      if (problem === undefined) {
        const id = (item as { value: EventObject }).value.id
        needsId.set(total, typeof id !== 'string')
        total++
        continue
      }
      invalid++
      if (listed.length < MAX_LISTED_PROBLEMS) listed.push({ position: item.position, problem })
    }
  }
  if (invalid > 0) throw invalidEvents(invalid, listed)
  if (total === 0) throw new EventsError('invalid', ` has no events. ${ACCEPTED_FORMS}`)
  const format = reader.isNdjson ? 'ndjson' : 'document'
  return { source, total, format, needsId: needsId.bytes(), fileVersion }
}

/** Whether event `position` (0-based) gets a generated id. */
export function needsGeneratedId(validated: ValidatedEvents, position: number): boolean {
  return ((validated.needsId[position >> 3] ?? 0) & (1 << (position & 7))) !== 0
}

function invalidEvents(invalid: number, listed: EventProblem[]): EventsError {
  const items = listed.map(item => `${describePosition(item.position)}: ${item.problem}`)
  if (invalid === 1) {
    return new EventsError('invalid', `, ${items[0]}. Nothing was sent.`, listed)
  }
  const more = invalid > listed.length ? `; and ${invalid - listed.length} more` : ''
  return new EventsError(
    'invalid',
    ` has ${plural(invalid, 'invalid event')}; nothing was sent. ${items.join('; ')}${more}.`,
    listed
  )
}

/** What is wrong with a parsed event, counting its size and whether its id was already used. */
function checkEvent(
  item: { position: EventPosition; value: unknown; line?: Buffer },
  idPositions: Map<string, EventPosition>
): string | undefined {
  const problem = eventProblem(item.value)
  if (problem !== undefined) return problem
  const event = item.value as EventObject
  const needsId = typeof event.id !== 'string'
  const bytes =
    item.line === undefined
      ? documentLine(event, needsId ? UUID_PLACEHOLDER : undefined).bytes
      : ndjsonLineBytes(item.line, needsId)
  if (bytes > MAX_REQUEST_BYTES) {
    const withId = needsId ? ' with its generated id' : ''
    return `it is ${bytes} bytes as an NDJSON line${withId}, over the service's limit of ${MAX_REQUEST_BYTES} bytes per request`
  }
  if (needsId) return undefined
  const id = event.id as string
  const first = idPositions.get(id)
  if (first !== undefined) {
    return `its "id" ${JSON.stringify(id).slice(0, 60)} is also the id of ${describePosition(first)}; ids must be unique`
  }
  idPositions.set(id, item.position)
  return undefined
}

/**
 * Reads a source's events, in groups (one per chunk of the file), each read lazily: a group must
 * be iterated to its end before the next is pulled.
 */
class EventReader {
  /** Undefined until the first non-blank line has told the format. */
  isNdjson?: boolean
  private readonly source: EventSource
  private lineNumber = 0
  /** Set at a line too long to read: reading ends there. */
  private stopped = false

  constructor(source: EventSource) {
    this.source = source
  }

  async *events(): AsyncGenerator<Iterable<ReadEvent>> {
    for await (const lines of readLines(this.source)) {
      yield this.ndjsonEvents(lines)
      if (this.isNdjson === false || this.stopped) break
    }
    if (this.isNdjson === false) {
      yield documentEvents(await readDocument(this.source)).map(({ at, value }) => ({
        position: { unit: 'event' as const, at },
        value
      }))
    }
  }

  private *ndjsonEvents(lines: Iterable<Buffer>): Generator<ReadEvent> {
    try {
      for (const line of lines) {
        this.lineNumber++
        if (line.length === 0) continue
        const position: EventPosition = { unit: 'line', at: this.lineNumber }
        if (!isUtf8(line)) {
          // No format yet: this may be the start of a document, which reports it the same way.
          if (this.isNdjson === undefined) {
            this.isNdjson = false
            return
          }
          yield { position, problem: 'it is not valid UTF-8' }
          continue
        }
        if (exceedsJsonDepth(line)) {
          yield { position, problem: `it nests JSON deeper than ${MAX_JSON_DEPTH} levels` }
          continue
        }
        let value: unknown
        try {
          value = JSON.parse(line.toString('utf8'))
        } catch (error) {
          if (this.isNdjson === undefined) {
            this.isNdjson = false
            return
          }
          yield { position, problem: `it is not valid JSON (${lineParseError(error)})` }
          continue
        }
        if (this.isNdjson === undefined) {
          this.isNdjson = !Array.isArray(value)
          if (!this.isNdjson) return
        }
        yield { position, value, line }
      }
    } catch (error) {
      if (!(error instanceof LineTooLong)) throw error
      // A long first line that opens an array is a one-line JSON document, read whole.
      if (this.isNdjson === undefined && error.firstByte === OPENING_BRACKET) {
        this.isNdjson = false
        return
      }
      this.stopped = true
      yield {
        position: { unit: 'line', at: error.lineNumber },
        problem: `it is longer than ${MAX_LINE_BYTES} bytes, more than one request may hold (reading stopped there)`
      }
    }
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
}

/**
 * Pass 2: reads the validated source again and cuts its events into NDJSON request bodies, each
 * as full as the service's limits allow. NDJSON lines are copied as bytes, not parsed again,
 * unless the event has an id of its own to read.
 */
import { Buffer } from 'node:buffer'
import { randomUUID } from 'node:crypto'
import { isJsonObject, parseJsonSafely } from '../helpers/json.ts'
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from '../service/client.ts'
import { EventsError, LineTooLong, fileVersionOf, readDocument, readLines } from './source.ts'
import type { EventSource, NumberedLine } from './source.ts'
import { eventProblem, lineBytes, needsGeneratedId, type ValidatedEvents } from './validate.ts'

/** One request body for POST /v2/stream. */
export interface EventBatch {
  /** 0-based position, in the input, of the batch's first event. */
  firstPosition: number
  /** The events' ids, in order: the client's own or generated ones. */
  ids: string[]
  /** NDJSON in UTF-8: one event per line, each line ending in "\n". */
  body: Buffer
}

/** An event read again, at a line (NDJSON) or a 1-based index (a document's, with its `value`). */
type EventLine = NumberedLine & { value?: unknown }

const NEWLINE = 0x0a
const OPENING_BRACE = 0x7b

/**
 * The batches of a validated source, made lazily, one at a time. Each event without an id gets
 * a random UUID here, before any attempt, so a retried batch carries the same ids. Throws an
 * EventsError ("changed") if the file changed since it was validated.
 */
export async function* eventBatches(validated: ValidatedEvents): AsyncGenerator<EventBatch> {
  const { source, total } = validated
  if (source.kind === 'file' && (await fileVersionOf(source.path)) !== validated.fileVersion) {
    throw changedError('it was modified after its events were validated')
  }
  const builder = new BatchBuilder()
  let position = 0
  try {
    const events: AsyncIterable<Iterable<EventLine>> =
      validated.format === 'ndjson' ? readLines(source) : documentLines(source, total)
    for await (const group of events) {
      for (const { at, line, value } of group) {
        if (position >= total) {
          throw changedError(`it now holds more than the ${total} events validated`)
        }
        const idIsGenerated = needsGeneratedId(validated, position++)
        const event = idIsGenerated ? undefined : (value ?? parseJsonSafely(line))
        const ownId = isJsonObject(event) && typeof event.id === 'string' ? event.id : undefined
        if (
          (idIsGenerated ? line[0] !== OPENING_BRACE : ownId === undefined) ||
          (value !== undefined && eventProblem(value) !== undefined)
        ) {
          const where = validated.format === 'ndjson' ? 'line' : 'event'
          throw changedError(`${where} ${at} is no longer what was validated`)
        }
        const full = builder.add(line, ownId ?? randomUUID(), idIsGenerated)
        if (full !== undefined) yield full
      }
    }
  } catch (error) {
    if (!(error instanceof LineTooLong)) throw error
    throw changedError(`line ${error.lineNumber} is no longer what was validated`)
  }
  if (position !== total) {
    throw changedError(`it now holds ${position} events instead of ${total}`)
  }
  const last = builder.finish()
  if (last !== undefined) yield last
}

/**
 * Builds batches line by line, in order: at most `maxEvents` events and `maxBytes` bytes each
 * (the service's limits unless told). Lines are written into one scratch buffer, and each body is
 * a copy of its used part.
 */
export class BatchBuilder {
  private readonly maxEvents: number
  private readonly buffer: Buffer
  private ids: string[] = []
  private bytes = 0
  private firstPosition = 0

  constructor(maxEvents = MAX_EVENTS_PER_REQUEST, maxBytes = MAX_REQUEST_BYTES) {
    this.maxEvents = maxEvents
    this.buffer = Buffer.allocUnsafe(maxBytes)
  }

  /**
   * Adds an event's line, with its generated id (a UUID) first when it has none of its own.
   * Returns the batch it completed when the line did not fit in that one.
   */
  add(line: Buffer, id: string, idIsGenerated: boolean): EventBatch | undefined {
    const bytes = lineBytes(line.length, idIsGenerated)
    // Pass 1 refused every event larger than a request; this guards against a changed file.
    if (bytes > this.buffer.length) {
      throw changedError(`an event is now ${bytes} bytes, more than a request may hold`)
    }
    const full =
      this.ids.length === this.maxEvents || this.bytes + bytes > this.buffer.length
        ? this.finish()
        : undefined
    let end = this.bytes
    // A valid event is an object with a name: "{" and at least one member, which the id precedes.
    // Written in parts: one string per event costs tens of MiB of heap at 100,000 events.
    if (idIsGenerated) {
      end += this.buffer.write('{"id":"', end)
      end += this.buffer.write(id, end)
      end += this.buffer.write('",', end)
    }
    const rest = idIsGenerated ? line.subarray(1) : line
    this.buffer.set(rest, end)
    this.buffer[end + rest.length] = NEWLINE
    this.bytes = end + rest.length + 1
    this.ids.push(id)
    return full
  }

  /** The batch being filled, if it holds any event; the next one starts after it. */
  finish(): EventBatch | undefined {
    if (this.ids.length === 0) return undefined
    const batch: EventBatch = {
      firstPosition: this.firstPosition,
      ids: this.ids,
      body: Buffer.from(this.buffer.subarray(0, this.bytes))
    }
    this.firstPosition += this.ids.length
    this.ids = []
    this.bytes = 0
    return batch
  }
}

/** The events of a JSON document, parsed again and serialized. */
async function* documentLines(source: EventSource, total: number): AsyncGenerator<EventLine[]> {
  let events: unknown[]
  try {
    events = await readDocument(source)
  } catch (error) {
    if (!(error instanceof EventsError && error.kind === 'invalid')) throw error
    throw changedError('it is no longer what was validated')
  }
  if (events.length !== total) {
    throw changedError(`it now holds ${events.length} events instead of ${total}`)
  }
  yield events.map((value, index) => ({
    at: index + 1,
    line: Buffer.from(JSON.stringify(value)),
    value
  }))
}

function changedError(what: string): EventsError {
  return new EventsError(
    ` changed while its events were being sent: ${what}. Make sure nothing writes to it while its events are sent.`,
    'changed'
  )
}

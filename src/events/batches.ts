/**
 * Pass 2: reads the validated source again and cuts its events into NDJSON request bodies, each
 * as full as the service's limits allow. NDJSON lines are copied as bytes, not parsed again,
 * unless the event has an id of its own to read.
 */
import { Buffer } from 'node:buffer'
import { randomUUID } from 'node:crypto'
import { isJsonObject, parseJsonSafely } from '../json.ts'
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from '../service/client.ts'
import { documentEvents } from './document.ts'
import { documentLine, eventProblem, ndjsonLine, type EventLine } from './event.ts'
import { EventsError, changedError } from './events-error.ts'
import { LineTooLong, fileVersionOf, readDocument, readLines } from './source.ts'
import { needsGeneratedId, type ValidatedEvents } from './validate.ts'

/** One request body for POST /v2/stream. */
export interface EventBatch {
  /** 0-based position, in the input, of the batch's first event. */
  firstPosition: number
  /** The events' ids, in order: the client's own or generated ones. */
  ids: string[]
  /** NDJSON in UTF-8: one event per line, each line ending in "\n". */
  body: Buffer
}

/** The most a batch may hold: the service's limits unless told (tests use small ones). */
export interface BatchLimits {
  maxEvents: number
  maxBytes: number
}

const NEWLINE = 0x0a
const OPENING_BRACE = 0x7b

/**
 * The batches of a validated source, made lazily, one at a time. Each event without an id gets
 * a random UUID here, before any attempt, so a retried batch carries the same ids. Throws an
 * EventsError ("changed") if the file changed since it was validated.
 */
export async function* eventBatches(validated: ValidatedEvents): AsyncGenerator<EventBatch> {
  const { source } = validated
  if (source.kind === 'file' && (await fileVersionOf(source.path)) !== validated.fileVersion) {
    throw changedError('it was modified after its events were validated')
  }
  const builder = new BatchBuilder()
  let position = 0
  const lines = validated.format === 'ndjson' ? ndjsonLines(validated) : documentLines(validated)
  for await (const group of lines) {
    for (const line of group) {
      position++
      const full = builder.add(line)
      if (full !== undefined) yield full
    }
  }
  if (position !== validated.total) {
    throw changedError(`it now holds ${position} events instead of ${validated.total}`)
  }
  const last = builder.finish()
  if (last !== undefined) yield last
}

/**
 * Builds batches line by line, in order: at most `limits.maxEvents` events and `limits.maxBytes`
 * bytes each. Lines are written into one scratch buffer, and each body is a copy of its used part.
 */
export class BatchBuilder {
  private readonly limits: BatchLimits
  private readonly buffer: Buffer
  private ids: string[] = []
  private bytes = 0
  private firstPosition = 0

  constructor(
    limits: BatchLimits = { maxEvents: MAX_EVENTS_PER_REQUEST, maxBytes: MAX_REQUEST_BYTES }
  ) {
    this.limits = limits
    this.buffer = Buffer.allocUnsafe(limits.maxBytes)
  }

  /** Adds a line; returns the batch it completed when the line did not fit in that one. */
  add(line: EventLine): EventBatch | undefined {
    // Pass 1 refused every event larger than a request; this guards against a changed file.
    if (line.bytes > this.limits.maxBytes) {
      throw changedError(`an event is now ${line.bytes} bytes, more than a request may hold`)
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
    this.buffer[end] = NEWLINE
    this.bytes = end + 1
    this.ids.push(line.id)
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

/**
 * NDJSON lines from bytes: an event with its own id is parsed for that id, and any other is not
 * parsed at all, only given a generated id.
 */
async function* ndjsonLines(validated: ValidatedEvents): AsyncGenerator<Iterable<EventLine>> {
  const { total } = validated
  let lineNumber = 0
  let position = 0
  function* linesOf(group: Iterable<Buffer>): Generator<EventLine> {
    for (const line of group) {
      lineNumber++
      if (line.length === 0) continue
      if (position >= total) {
        throw changedError(`it now holds more than the ${total} events validated`)
      }
      if (!needsGeneratedId(validated, position++)) {
        const event = parseJsonSafely(line)
        if (!isJsonObject(event) || typeof event.id !== 'string') throw lineChanged(lineNumber)
        yield ndjsonLine(line, event.id, false)
      } else if (line[0] === OPENING_BRACE) {
        yield ndjsonLine(line, randomUUID(), true)
      } else {
        throw lineChanged(lineNumber)
      }
    }
  }
  try {
    for await (const group of readLines(validated.source)) yield linesOf(group)
  } catch (error) {
    if (error instanceof LineTooLong) throw lineChanged(error.lineNumber)
    throw error
  }
}

/** The events of a JSON document: parsed again and serialized. */
async function* documentLines(validated: ValidatedEvents): AsyncGenerator<Iterable<EventLine>> {
  const lines: EventLine[] = []
  let events: ReturnType<typeof documentEvents>
  try {
    events = documentEvents(await readDocument(validated.source))
  } catch (error) {
    if (error instanceof EventsError && error.kind === 'invalid') {
      throw changedError('it is no longer what was validated')
    }
    throw error
  }
  for (const [index, item] of events.entries()) {
    if (eventProblem(item.value) !== undefined) {
      throw changedError(`event ${item.at} is no longer what was validated`)
    }
    const event = item.value as Record<string, unknown>
    const id = needsGeneratedId(validated, index) ? randomUUID() : undefined
    if (id === undefined && typeof event.id !== 'string') {
      throw changedError(`event ${item.at} is no longer what was validated`)
    }
    lines.push(documentLine(event, id))
  }
  yield lines
}

function lineChanged(lineNumber: number): EventsError {
  return changedError(`line ${lineNumber} is no longer what was validated`)
}

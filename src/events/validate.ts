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
import { randomUUID } from 'node:crypto'
import { errorMessage } from '../errors.ts'
import { MAX_JSON_DEPTH, isJsonObject, jsonDepthExceededAt } from '../helpers/json.ts'
import { MAX_REQUEST_BYTES } from '../service/client.ts'
import { plural } from '../helpers/text.ts'
import {
  ACCEPTED_FORMS,
  EventsError,
  LineTooLong,
  MAX_LINE_BYTES,
  describeJsonType,
  fileVersionOf,
  readDocument,
  readLines,
  type EventSource
} from './source.ts'

/** What pass 1 learned about a source, for pass 2. */
export interface ValidatedEvents {
  readonly source: EventSource
  /** How many events the source holds. */
  readonly total: number
  readonly format: 'ndjson' | 'document'
  /** Bit i (of 32 per number) is set when event i has no id of its own. */
  readonly needsId: readonly number[]
  /** A file's size and modification time when it was validated. */
  readonly fileVersion?: string
}

/** Invalid events listed in one error message; the rest are only counted. */
const MAX_LISTED_PROBLEMS = 5
const OPENING_BRACKET = 0x5b
/** The fields of an event in the service's interface; the service refuses others. */
const EVENT_FIELDS = new Set(['id', 'name', 'data'])
/** `"id":"<uuid>",`: what a generated id adds to an event's line, after its opening brace. */
const GENERATED_ID_BYTES = Buffer.byteLength(`"id":"${randomUUID()}",`)

/** Checks every event, or throws an EventsError naming the invalid ones: then nothing is sent. */
export async function validateEvents(source: EventSource): Promise<ValidatedEvents> {
  const fileVersion = source.kind === 'file' ? await fileVersionOf(source.path) : undefined
  const needsId: number[] = []
  const idFirstAt = new Map<string, number>()
  const listed: string[] = []
  let invalid = 0
  let total = 0
  // Events are named by their line, or their number in a document. Positions stay numbers until
  // a problem is written: a string per event costs tens of MiB of heap at 100,000 events.
  let unit = 'line'
  const record = (at: number, problem: string | undefined): void => {
    if (problem !== undefined && invalid++ < MAX_LISTED_PROBLEMS)
      listed.push(`${unit} ${at}: ${problem}`)
  }
  /** What is wrong with a parsed event of `length` bytes, counting it when nothing is. */
  const check = (at: number, value: unknown, length: number): string | undefined => {
    const problem = eventProblem(value)
    if (problem !== undefined) return problem
    const { id } = value as Record<string, unknown>
    const idIsGenerated = typeof id !== 'string'
    const bytes = lineBytes(length, idIsGenerated)
    if (bytes > MAX_REQUEST_BYTES) {
      return `it is ${bytes} bytes as an NDJSON line${idIsGenerated ? ' with its generated id' : ''}, over the service's limit of ${MAX_REQUEST_BYTES} bytes per request`
    }
    if (idIsGenerated) {
      needsId[total >> 5] = (needsId[total >> 5] ?? 0) | (1 << (total & 31))
    } else {
      const first = idFirstAt.get(id)
      if (first !== undefined) {
        return `its "id" ${JSON.stringify(id).slice(0, 60)} is also the id of ${unit} ${first}; ids must be unique`
      }
      idFirstAt.set(id, at)
    }
    total++
    return undefined
  }

  let format: ValidatedEvents['format'] | undefined
  try {
    reading: for await (const group of readLines(source)) {
      for (const { at, line } of group) {
        let value: unknown
        let problem: string | undefined
        if (!isUtf8(line)) {
          problem = 'it is not valid UTF-8'
        } else if (jsonDepthExceededAt(line) !== -1) {
          record(at, `it nests JSON deeper than ${MAX_JSON_DEPTH} levels`)
          continue
        } else {
          try {
            value = JSON.parse(line.toString('utf8'))
          } catch (error) {
            // Without the parser's "(line 1 column 13)": the line is named by its number already.
            problem = `it is not valid JSON (${errorMessage(error).replace(/\s*\(line \d+ column \d+\)/, '')})`
          }
        }
        // A first line that is not UTF-8, not JSON or an array starts a document, which then
        // reports its problems the same way.
        format ??= problem !== undefined || Array.isArray(value) ? 'document' : 'ndjson'
        if (format === 'document') break reading
        record(at, problem ?? check(at, value, line.length))
      }
    }
  } catch (error) {
    if (!(error instanceof LineTooLong)) throw error
    // A long first line that opens an array is a one-line JSON document, read whole.
    if (format === undefined && error.firstByte === OPENING_BRACKET) {
      format = 'document'
    } else {
      record(
        error.lineNumber,
        `it is longer than ${MAX_LINE_BYTES} bytes, more than one request may hold (reading stopped there)`
      )
    }
  }
  if (format === 'document') {
    unit = 'event'
    for (const [index, value] of (await readDocument(source)).entries()) {
      record(index + 1, check(index + 1, value, Buffer.byteLength(JSON.stringify(value))))
    }
  }

  if (invalid === 1) throw new EventsError(`, ${listed[0]}. Nothing was sent.`)
  if (invalid > 1) {
    const more = invalid > listed.length ? `; and ${invalid - listed.length} more` : ''
    throw new EventsError(
      ` has ${plural(invalid, 'invalid event')}; nothing was sent. ${listed.join('; ')}${more}.`
    )
  }
  if (total === 0) throw new EventsError(` has no events. ${ACCEPTED_FORMS}`)
  return { source, total, format: format ?? 'document', needsId, fileVersion }
}

/** Whether event `position` (0-based) gets a generated id. */
export function needsGeneratedId(validated: ValidatedEvents, position: number): boolean {
  return (((validated.needsId[position >> 5] ?? 0) >>> (position & 31)) & 1) === 1
}

/** An event's size as an NDJSON line, from its `length` as written: newline and generated id included. */
export function lineBytes(length: number, idIsGenerated: boolean): number {
  return length + 1 + (idIsGenerated ? GENERATED_ID_BYTES : 0)
}

/** What is wrong with one parsed event, or undefined when the interface accepts it. */
export function eventProblem(value: unknown): string | undefined {
  if (!isJsonObject(value)) return `it is ${describeJsonType(value)}, not an event object`
  if (!Object.hasOwn(value, 'name')) return 'it has no "name" (a non-empty string is required)'
  if (typeof value.name !== 'string') {
    return `"name" is ${describeJsonType(value.name)}; it must be a non-empty string`
  }
  if (value.name === '') return '"name" is empty; it must be a non-empty string'
  // Any JSON value, null included, as the interface says.
  if (!Object.hasOwn(value, 'data')) return 'it has no "data" (a JSON value is required)'
  const unknown = Object.keys(value).filter(field => !EVENT_FIELDS.has(field))
  if (unknown.length > 0) {
    return `it has ${unknown.map(field => JSON.stringify(field).slice(0, 40)).join(', ')}: an event has only "id", "name" and "data" (put anything else inside "data")`
  }
  if (!Object.hasOwn(value, 'id')) return undefined
  const fix = 'give a non-empty string, or leave it out to get a generated id'
  if (typeof value.id !== 'string') return `"id" is ${describeJsonType(value.id)}; ${fix}`
  return value.id === '' ? `"id" is empty; ${fix}` : undefined
}

/**
 * One event: what the interface accepts (`id` optional, `name`, `data`), and its NDJSON line as
 * it will be sent, with a generated id first when it has none of its own.
 */
import { Buffer } from 'node:buffer'
import { errorMessage } from '../errors.ts'
import { isJsonObject, rawJson } from '../json.ts'

export type EventObject = Record<string, unknown>

/** One event ready to batch. */
export interface EventLine {
  id: string
  /** The event's JSON on one line, without the newline, in pieces that are written in order. */
  parts: ReadonlyArray<string | Uint8Array>
  /** The line's size in UTF-8 bytes, newline included. */
  bytes: number
}

/** The fields of an event in the service's interface; the service refuses others. */
const EVENT_FIELDS = new Set(['id', 'name', 'data'])

/** Pass 1 sizes an event that has no id with this stand-in: randomUUID() has the same length. */
export const UUID_PLACEHOLDER = '00000000-0000-0000-0000-000000000000'
/** `{"id":"<uuid>",` replaces an event's opening brace when its id is generated. */
const GENERATED_ID_PREFIX_BYTES = Buffer.byteLength(`{"id":${JSON.stringify(UUID_PLACEHOLDER)},`)

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

/** What ndjsonLine(line, …).bytes will be, computed without building the line (pass 1 is hot). */
export function ndjsonLineBytes(line: Uint8Array, idIsGenerated: boolean): number {
  return idIsGenerated ? GENERATED_ID_PREFIX_BYTES + line.length : line.length + 1
}

/**
 * An NDJSON line as it will be sent: as written, so that every value reaches the service exactly
 * as the user wrote it, with the id first when it is a generated one.
 */
export function ndjsonLine(line: Uint8Array, id: string, idIsGenerated: boolean): EventLine {
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
export function documentLine(event: EventObject, generatedId?: string): EventLine {
  const json = JSON.stringify(generatedId === undefined ? event : { id: generatedId, ...event })
  const id = generatedId ?? (event.id as string)
  return { id, parts: [json], bytes: Buffer.byteLength(json) + 1 }
}

/**
 * A JSON.parse reviver that keeps numbers JavaScript would change (large integers, 1.0, 1e400)
 * as their source text, so that re-serializing the event does not alter its data.
 */
export function keepNumbersAsWritten(
  _key: string,
  value: unknown,
  context?: { source?: string }
): unknown {
  const source = context?.source
  if (typeof value !== 'number' || source === undefined || rawJson.rawJSON === undefined) {
    return value
  }
  return String(value) === source ? value : rawJson.rawJSON(source)
}

/**
 * The parser's message for one NDJSON line, without its "(line 1 column 13)": the line is named
 * by its number in the file already.
 */
export function lineParseError(error: unknown): string {
  return errorMessage(error).replace(/\s*\(line \d+ column \d+\)/, '')
}

export function describeJsonType(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'missing'
  if (Array.isArray(value)) return 'an array'
  if (rawJson.isRawJSON?.(value) === true) return 'a number'
  // What JSON holds: a string, a number, a boolean or an object.
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

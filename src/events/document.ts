/**
 * Events given as one JSON document: an event object, or an array of them (pretty-printed or
 * not). Such a document is parsed whole, so it is read whole (at most MAX_DOCUMENT_BYTES).
 */
import { errorMessage } from '../errors.ts'
import { MAX_JSON_DEPTH, isJsonObject, jsonDepthExceededAt } from '../json.ts'
import { EventsError } from './events-error.ts'
import { describeJsonType, keepNumbersAsWritten } from './event.ts'

export const ACCEPTED_FORMS =
  'Give one JSON event object, a JSON array of events, or NDJSON (one event object per line).'

/** The events of one JSON document, each with its 1-based number. */
export function documentEvents(text: string): Array<{ at: number; value: unknown }> {
  // Checked before parsing: the parser recurses, and a deep document overflows its stack.
  const deepAt = jsonDepthExceededAt(text)
  if (deepAt !== -1) {
    const line = text.slice(0, deepAt).split('\n').length
    throw new EventsError(
      'invalid',
      `, line ${line}: it nests JSON deeper than ${MAX_JSON_DEPTH} levels, the most accepted. Nothing was sent.`,
      [{ position: { unit: 'line', at: line }, problem: `it nests deeper than ${MAX_JSON_DEPTH}` }]
    )
  }
  let document: unknown
  try {
    document = JSON.parse(text, keepNumbersAsWritten)
  } catch (error) {
    throw new EventsError(
      'invalid',
      ` is not valid JSON: ${errorMessage(error)}. ${ACCEPTED_FORMS}`
    )
  }
  if (Array.isArray(document)) {
    return document.map((value: unknown, index) => ({ at: index + 1, value }))
  }
  if (isJsonObject(document)) return [{ at: 1, value: document }]
  throw new EventsError('invalid', ` is ${describeJsonType(document)}. ${ACCEPTED_FORMS}`)
}

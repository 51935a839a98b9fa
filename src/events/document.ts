/**
 * Events given as one JSON document: an event object, or an array of them (pretty-printed or
 * not). Such a document is parsed whole, so it is read whole (at most MAX_DOCUMENT_BYTES).
 */
import { MAX_JSON_DEPTH, exceedsJsonDepth, isJsonObject } from '../json.ts'
import { EventsError } from './events-error.ts'
import { describeJsonType, keepNumbersAsWritten } from './event.ts'

export const ACCEPTED_FORMS =
  'Give one JSON event object, a JSON array of events, or NDJSON (one event object per line).'

/** The events of one JSON document, each with its 1-based number. */
export function documentEvents(text: string): Array<{ at: number; value: unknown }> {
  // Checked before parsing: the parser recurses, and a deep document overflows its stack.
  if (exceedsJsonDepth(text)) {
    const line = deepLine(text)
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
    const reason = error instanceof Error ? error.message : String(error)
    throw new EventsError('invalid', ` is not valid JSON: ${reason}. ${ACCEPTED_FORMS}`)
  }
  if (Array.isArray(document)) {
    return document.map((value: unknown, index) => ({ at: index + 1, value }))
  }
  if (isJsonObject(document)) return [{ at: 1, value: document }]
  throw new EventsError('invalid', ` is ${describeJsonType(document)}. ${ACCEPTED_FORMS}`)
}

/**
 * The 1-based line on which the document first nests too deep: the first line whose end, read
 * from the start, passes the bound (a binary search; only on this error path).
 */
function deepLine(text: string): number {
  const lineEnds: number[] = []
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    lineEnds.push(index)
  }
  lineEnds.push(text.length)
  let low = 0
  let high = lineEnds.length - 1
  while (low < high) {
    const middle = (low + high) >> 1
    if (exceedsJsonDepth(text.slice(0, lineEnds[middle]))) high = middle
    else low = middle + 1
  }
  return low + 1
}

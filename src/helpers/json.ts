/** JSON from outside, read safely: a bound on nesting, a parse that never throws, one guard. */

/**
 * How deep JSON from outside may nest. Deeper documents are refused before parsing: printing or
 * sending a parsed value recurses, and a 20,000-deep one ends in "Maximum call stack size
 * exceeded", naming nothing.
 */
export const MAX_JSON_DEPTH = 512

/**
 * Where JSON text first nests deeper than `max` (an index into the string or bytes), or -1.
 * A linear scan that skips strings; it does not validate, so run it before the parser.
 */
export function jsonDepthExceededAt(text: string | Uint8Array, max = MAX_JSON_DEPTH): number {
  // Nesting deeper than `max` takes more than `max` opening brackets: most texts are too short.
  if (text.length <= max) return -1
  const isString = typeof text === 'string'
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    // " \ { [ } ] as character codes: the same in a string and in UTF-8 bytes.
    const code = isString ? text.charCodeAt(i) : text[i]
    if (inString) {
      if (code === 0x5c) i++
      else if (code === 0x22) inString = false
    } else if (code === 0x22) {
      inString = true
    } else if (code === 0x7b || code === 0x5b) {
      if (++depth > max) return i
    } else if (code === 0x7d || code === 0x5d) {
      depth--
    }
  }
  return -1
}

/** JSON text as a value; undefined when it is not JSON or nests deeper than MAX_JSON_DEPTH. */
export function parseJsonSafely(text: string | Buffer): unknown {
  if (jsonDepthExceededAt(text) !== -1) return undefined
  // A Buffer's String() is its UTF-8 text.
  try {
    return JSON.parse(String(text)) as unknown
  } catch {
    return undefined
  }
}

// JSON.rawJSON and JSON.isRawJSON (Node 21+) are not in TypeScript's lib yet.
export const rawJson = JSON as JSON & {
  rawJSON?: (text: string) => unknown
  isRawJSON?: (value: unknown) => boolean
}

/** A JSON object: not null, not an array, not a number kept as written (JSON.rawJSON). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    rawJson.isRawJSON?.(value) !== true
  )
}

/**
 * How the input layer quotes and checks what the user gave, for its error messages: values are
 * quoted short and escaped, and characters are named by code point.
 */
import { InputError } from '../errors.ts'
import { inert } from '../text.ts'

/** An offending value is quoted only this far, so that 100 KB of junk never floods a log. */
export const QUOTED_VALUE_MAX_CHARS = 40

export const CONTROL_CHARACTER = /\p{Cc}/u
const CONTROL_CHARACTER_EXCEPT_LINE_BREAKS_AND_TAB = /[^\P{Cc}\t\n\r]/u

/** The value as a short, escaped JSON string literal, for an error message. */
export function quote(raw: string): string {
  const shown = truncate(raw)
  const literal = inert(JSON.stringify(shown))
  return shown === raw ? literal : `${literal}… (${raw.length} characters)`
}

function truncate(text: string): string {
  const shown = text.slice(0, QUOTED_VALUE_MAX_CHARS)
  // Do not cut a surrogate pair in half.
  return shown.length < text.length && /[\ud800-\udbff]$/.test(shown) ? shown.slice(0, -1) : shown
}

export function describeCharacter(raw: string, index: number): string {
  const codePoint = raw.codePointAt(index) ?? 0
  const position = Array.from(raw.slice(0, index)).length + 1
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')} at character ${position}`
}

/** A parsed JSON value as short JSON text, for an error message. */
export function describeJsonValue(value: unknown): string {
  const text = JSON.stringify(value)
  const shown = inert(truncate(text))
  return shown.length < text.length ? `${shown}…` : shown
}

export function rejectControlCharacters(
  name: string,
  value: string,
  allowLineBreaks = false
): void {
  const pattern = allowLineBreaks ? CONTROL_CHARACTER_EXCEPT_LINE_BREAKS_AND_TAB : CONTROL_CHARACTER
  const index = value.search(pattern)
  if (index === -1) return
  const which = allowLineBreaks
    ? 'control characters other than tab and line breaks'
    : 'control characters'
  throw new InputError(
    name,
    `Input "${name}" must not contain ${which}; found ${describeCharacter(value, index)} in ${quote(value)}.`
  )
}

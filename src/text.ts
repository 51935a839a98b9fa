/**
 * Wording helpers shared by every layer, each with one meaning. None of them makes outside text
 * safe to print: that is `inert`, applied by the report to everything it writes.
 */

/**
 * Characters that could start a workflow command or move the terminal when printed: every
 * control character (line breaks and ESC among them), Unicode line and paragraph separators,
 * and the bidirectional overrides and isolates that reorder what a reader sees.
 */
const UNSAFE_CHARACTERS = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu

/**
 * Outside text made inert for one line of a log, an annotation or an output: nothing in it can
 * begin a new line, a terminal sequence or a workflow command, and nothing is silently lost.
 * Each unsafe character becomes its visible escape (`\n`, `\u001b`); then the two command forms
 * the runner reads are broken: the legacy `##[name …]`, which it finds anywhere in a line, and
 * `::name::`, which it reads when a line begins with it after whitespace.
 */
export function inert(text: string): string {
  return withoutCommands(escapeControls(text))
}

/**
 * Each unsafe character as its visible escape: one line that cannot move the terminal. Enough
 * where the runner never reads commands (the job summary); printed lines need `inert`.
 */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE_CHARACTERS, escapeCharacter)
}

/**
 * The runner's legacy command prefix, which it looks for anywhere in a line (not only at the
 * start), and the current one, which it reads at the start of a line after whitespace (.NET's
 * whitespace, all of it within `\s` once control characters are escaped).
 */
const LEGACY_COMMAND_PREFIX = /##\[/g
const LEADING_COMMAND_PREFIX = /^(\s*)::/

/**
 * The second `#` of `##[` and the first `:` of a leading `::` written as the same visible
 * `\uXXXX` escape `inert` uses for control characters: readers know the form, and a JSON body
 * keeps its meaning (`#` and `:` only occur inside JSON strings, where `\u0023` and `\u003a`
 * are the same characters). A plain backslash (`##\[`) would make a JSON string invalid.
 */
function withoutCommands(text: string): string {
  return text
    .replace(LEGACY_COMMAND_PREFIX, '#\\u0023[')
    .replace(LEADING_COMMAND_PREFIX, '$1\\u003a:')
}

/** Whether the text holds a character that `escapeControls` (and so `inert`) would escape. */
export function hasUnsafeCharacter(text: string): boolean {
  UNSAFE_CHARACTERS.lastIndex = 0
  const found = UNSAFE_CHARACTERS.test(text)
  UNSAFE_CHARACTERS.lastIndex = 0
  return found
}

const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

function escapeCharacter(character: string): string {
  return NAMED_ESCAPES[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/** Whitespace runs (line breaks included) folded to one space, trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/**
 * At most `max` code points, ending in "…" when cut; an emoji or surrogate pair is never cut in
 * half. Cut only after redaction, so that a cut never leaves part of a secret behind.
 */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text
  const points = Array.from(text)
  if (points.length <= max) return text
  return `${points.slice(0, Math.max(0, max - 1)).join('')}…`
}

/** Ends a text with a full stop unless it already ends a sentence. */
export function endSentence(text: string): string {
  const trimmed = text.trim()
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}

/** A text placed mid-sentence: without its own final full stops. */
export function withoutFinalStop(text: string): string {
  return text.trim().replace(/\.+$/, '')
}

/** "1 event", "2 events"; the plural form is given where adding "s" is wrong. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`
}

/** "1.3 s", "30 s". */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`
}

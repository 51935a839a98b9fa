/**
 * Wording helpers shared by every layer, each with one meaning. None of them makes outside text
 * safe to print: that is `inert`, applied by the report to everything it writes.
 */

/**
 * Characters that could start a workflow command or move the terminal when printed: control
 * characters, Unicode line and paragraph separators, and the bidi controls that reorder text.
 */
const UNSAFE = String.raw`\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069`
export const UNSAFE_CHARACTERS = new RegExp(`[${UNSAFE}]`, 'gu')

/**
 * The unsafe characters and those that show nothing (zero-width space, non-joiner and joiner,
 * word joiner, byte order mark), for a character class: text that must read as it filters (a
 * label) holds none of them.
 */
export const UNSEEN_CHARACTERS = String.raw`${UNSAFE}\u200b-\u200d\u2060\ufeff`

/**
 * Outside text made inert for one line of a log, an annotation or an output: nothing in it can
 * begin a new line, a terminal sequence or a workflow command, and nothing is silently lost.
 * Each unsafe character becomes its visible escape (`\n`, `\u001b`); then the two command forms
 * the runner reads are broken. It reads the legacy `##[` anywhere in a line, and `::` at its start
 * after whitespace (all of it within `\s` once control characters are escaped). The second `#`
 * and the first `:` become the `\uXXXX` escape used here: a JSON body keeps its meaning (`#` and
 * `:` occur only in its strings, where the escape is the same character); a backslash alone
 * would break it.
 */
export function inert(text: string): string {
  return withoutCommands(escapeControls(text))
}

/** The two command forms the runner reads, broken: `##[` anywhere, `::` at a line's start. */
function withoutCommands(text: string): string {
  return text.replace(/##\[/g, '#\\u0023[').replace(/^(\s*)::/, '$1\\u003a:')
}

/**
 * Each unsafe character as its visible escape: one line that cannot move the terminal. Enough
 * where the runner never reads commands (the job summary); printed lines need `inert`.
 */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE_CHARACTERS, escapeCharacter)
}

/** Whether the text holds a character that `escapeControls` (and so `inert`) would escape. */
export function hasUnsafeCharacter(text: string): boolean {
  // `search` ignores (and keeps) the global pattern's lastIndex, which `test` would move.
  return text.search(UNSAFE_CHARACTERS) !== -1
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
  // 2 × max UTF-16 units hold at least max code points: the rest is never read.
  const points = Array.from(text.slice(0, 2 * max))
  if (points.length <= max && text.length <= 2 * max) return text
  return `${points.slice(0, Math.max(0, max - 1)).join('')}…`
}

/** Ends a text with a full stop unless it already ends a sentence. */
export function endSentence(text: string): string {
  const trimmed = text.trim()
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}

/** A text placed mid-sentence: without its own final full stops. */
export function withoutFinalStop(text: string): string {
  const trimmed = text.trim()
  // A loop, not /\.+$/: that pattern retries at each dot of a long run, in quadratic time.
  let end = trimmed.length
  while (end > 0 && trimmed[end - 1] === '.') end--
  return trimmed.slice(0, end)
}

/** "1 event", "2 events"; the plural form is given where adding "s" is wrong. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`
}

/** "1.3 s", "30 s". */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`
}

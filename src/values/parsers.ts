/** One parser per kind of input. Offending values are quoted short and escaped, secrets never. */
import { outcomeOf, type EventOutcome } from '../deploy.ts'
import { InputError, quote, quotedPart } from '../errors.ts'
import { MAX_JSON_DEPTH, jsonDepthExceededAt } from '../helpers/json.ts'
import { inert, UNSAFE_CHARACTERS, UNSEEN_CHARACTERS } from '../helpers/text.ts'
import { MAX_ISSUE_KEY_PREFIXES, parseIssueKeyMode } from '../triage/issue-keys.ts'
import { Inputs, type Settings } from '../settings.ts'

/** The most a Git ref name may be; longer values are not a SHA, tag or branch. */
const MAX_REF_CHARS = 255

export const CONTROL_CHARACTER = /\p{Cc}/u

/** "U+0007 at character 3" */
export function describeCharacter(raw: string, index: number): string {
  const codePoint = raw.codePointAt(index) ?? 0
  const position = Array.from(raw.slice(0, index)).length + 1
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')} at character ${position}`
}

export function refusal(name: string, problem: string): InputError {
  return new InputError(name, ` ${problem}`)
}

/**
 * What each kind of value refuses: a line, what could break or reorder it when shown; multi-line
 * text, control characters but tab and line breaks; a label, which must read as it filters, also
 * what shows nothing.
 */
const REFUSED_CHARACTERS = {
  line: [UNSAFE_CHARACTERS, 'control, line-separating or bidirectional characters'],
  text: [/[^\P{Cc}\t\n\r]/u, 'control characters other than tab and line breaks'],
  label: [
    new RegExp(`[${UNSEEN_CHARACTERS}]`, 'u'),
    'control, invisible, line-separating or bidirectional characters'
  ]
} as const

function rejectCharacters(name: string, text: string, kind: keyof typeof REFUSED_CHARACTERS): void {
  const [pattern, which] = REFUSED_CHARACTERS[kind]
  const index = text.search(pattern)
  if (index === -1) return
  throw refusal(
    name,
    `must not contain ${which}; found ${describeCharacter(text, index)} in ${quote(text)}.`
  )
}

/** One of the words, in any letter case: "must be a, b or c" names them all. */
export function parseWord<T extends string>(name: string, words: readonly T[], raw: string): T {
  const word = words.find(known => known === raw.trim().toLowerCase())
  if (word) return word
  const named = `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`
  throw refusal(name, `must be ${named}; got ${quote(raw)}.`)
}

/** `true` or `false`, in any letter case (a superset of YAML 1.2 core schema: True, TRUE). */
export function parseBoolean(name: string, raw: string): boolean {
  return parseWord(name, ['true', 'false'], raw) === 'true'
}

/** include-commits: `true` or `false` in any letter case, or `git` (the checkout, not the API). */
export function parseIncludeCommits(raw: string): Pick<Settings, 'includeCommits' | 'commitsFrom'> {
  const word = parseWord(Inputs.IncludeCommits, ['true', 'false', 'git'], raw)
  return { includeCommits: word !== 'false', commitsFrom: word === 'git' ? 'git' : 'api' }
}

/** A whole number in decimal digits, within [min, max]. */
export function parseWholeNumber(name: string, raw: string, min: number, max: number): number {
  const number = /^[0-9]+$/.test(raw.trim()) ? Number(raw.trim()) : NaN
  if (number >= min && number <= max) return number
  throw refusal(name, `must be a whole number from ${min} to ${max}; got ${quote(raw)}.`)
}

/** One of the choices (command, record-at), exactly as written (after trimming). */
export function parseOneOf<T extends string>(name: string, choices: readonly T[], raw: string): T {
  const choice = choices.find(known => known === raw.trim())
  if (choice) return choice
  throw refusal(name, `must be one of ${choices.join(', ')}; got ${quote(raw)}.`)
}

/** The items, trimmed, without empties or duplicates, in first-seen order; undefined when none. */
function uniqueItems(items: readonly string[]): string[] | undefined {
  const unique = [...new Set(items.map(item => item.trim()).filter(item => item !== ''))]
  return unique.length > 0 ? unique : undefined
}

/**
 * Labels separated by commas or line breaks; undefined when none remain. A label holding a
 * character that breaks a line, reorders text or shows nothing is refused.
 */
export function parseLabels(raw: string): string[] | undefined {
  const labels = uniqueItems(raw.split(/\r\n|[\r\n,]/))
  for (const label of labels ?? []) rejectCharacters(Inputs.Labels, label, 'label')
  return labels
}

/** Any JSON value; undefined when empty. */
export function parseJson(name: string, raw: string): unknown {
  if (raw.trim() === '') return undefined
  const tooDeep = jsonDepthExceededAt(raw, MAX_JSON_DEPTH)
  if (tooDeep !== -1) {
    throw refusal(
      name,
      `nests JSON deeper than ${MAX_JSON_DEPTH} levels (at ${lineAndColumn(raw, tooDeep)}); flatten it.`
    )
  }
  return jsonOf(name, raw, raw, 'must be valid JSON, such as {"ticket": "OPS-42"}')
}

/** The JSON value of `text`, or a refusal: what is accepted, then what is wrong and where. */
function jsonOf(name: string, text: string, raw: string, accepted: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw refusal(name, `${accepted}: ${describeJsonError(text, error)}; got ${quote(raw)}.`)
  }
}

/** What is wrong with the JSON and where, in the parser's words only where they quote no input. */
function describeJsonError(raw: string, error: unknown): string {
  const message = error instanceof Error ? error.message : ''
  const located = /^([^"(]+?)(?: in JSON)? at position (\d+)/.exec(message)
  if (located) {
    const where = lineAndColumn(raw, Number(located[2]))
    return `${located[1].charAt(0).toLowerCase()}${located[1].slice(1)} at ${where}`
  }
  if (message.startsWith('Unexpected end of JSON input')) return 'it ends early'
  const token = /^Unexpected token '([\s\S])'/u.exec(message)
  if (token) return `unexpected character ${quote(token[1])}`
  return 'it cannot be parsed'
}

/** "line 3, column 7" of a 0-based index into the text. */
function lineAndColumn(text: string, index: number): string {
  const before = text.slice(0, index).split('\n')
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`
}

/** A JSON array when it starts with "["; else one per line, or per comma when on one line. */
export function parseEventIds(raw: string): string[] | undefined {
  const name = Inputs.EventIds
  const value = raw.trim()
  let items: string[]
  if (value.startsWith('[')) {
    const accepted =
      'starts with "[", so it must be a JSON array of non-empty strings, such as ["id-1", "id-2"]'
    const parsed = jsonOf(name, value, raw, accepted)
    if (!Array.isArray(parsed)) throw refusal(name, `${accepted}; got ${quote(raw)}.`)
    const bad = parsed.findIndex(item => typeof item !== 'string' || item.trim() === '')
    if (bad !== -1) {
      const text = JSON.stringify(parsed[bad])
      throw refusal(name, `${accepted}; element ${bad + 1} is ${inert(quotedPart(text))}.`)
    }
    items = parsed as string[]
  } else {
    items = value.split(/[\r\n]/.test(value) ? /\r\n|[\r\n]/ : ',')
  }
  const ids = uniqueItems(items)
  for (const id of ids ?? []) parseId(name, id)
  return ids
}

/** Ids end up in URL paths and queries: no control characters, and not "." or "..". */
export function parseId(name: string, raw: string): string | undefined {
  const id = raw.trim()
  if (id === '') return undefined
  rejectCharacters(name, id, 'line')
  if (id === '.' || id === '..') throw refusal(name, `must be an id, not ${quote(id)}.`)
  return id
}

/** What a deploy fixes (remediates): an id or a version, at most MAX_REF_CHARS characters. */
export function parseShortId(name: string, raw: string): string | undefined {
  const id = parseId(name, raw)
  if (id === undefined || id.length <= MAX_REF_CHARS) return id
  throw refusal(name, `must be at most ${MAX_REF_CHARS} characters; got ${quote(id)}.`)
}

/** Free text: undefined when blank; otherwise kept exactly as given. */
export function parseText(name: string, raw: string, multiline: boolean): string | undefined {
  if (raw.trim() === '') return undefined
  rejectCharacters(name, raw, multiline ? 'text' : 'line')
  return raw
}

/** A key or token travels in an HTTP header: visible ASCII, no spaces or line breaks. */
function headerValue(name: string, value: string, advice: string): string {
  if (/^[\x21-\x7e]+$/.test(value)) return value
  throw refusal(
    name,
    `may contain only visible ASCII characters (no spaces or line breaks), since it is sent in an HTTP header; ${advice}.`
  )
}

/** Never quoted. */
export function parseApiKey(raw: string): string {
  const key = raw.trim()
  // The door says how a key is given: its words replace this one's.
  if (key === '') throw Object.assign(refusal(Inputs.ApiKey, 'is required.'), { missing: true })
  return headerValue(Inputs.ApiKey, key, 'check that the whole key, and only the key, was copied')
}

/** A local runner may pass action.yml's default (`${{ github.token }}`) unevaluated: no token. */
export function isUnevaluatedExpression(value: string): boolean {
  return /^\$\{\{.*\}\}$/s.test(value.trim())
}

/** github-token: '' when none. Never quoted. */
export function parseToken(name: string, raw: string): string {
  const token = raw.trim()
  if (token === '' || isUnevaluatedExpression(token)) return ''
  return headerValue(name, token, 'pass ${{ github.token }} or a token from a secret')
}

/** A commit SHA, tag or branch (previous-version): undefined when empty. */
export function parseRef(name: string, raw: string): string | undefined {
  const ref = raw.trim()
  if (ref === '') return undefined
  if (ref.length > MAX_REF_CHARS || !/^[^\s~^:?*[\\]+$/u.test(ref) || ref.includes('..')) {
    throw refusal(
      name,
      `must be a commit SHA, tag or branch name (no spaces, "..", ~ ^ : ? * [ or \\, at most ${MAX_REF_CHARS} characters); got ${quote(raw)}.`
    )
  }
  rejectCharacters(name, ref, 'line')
  return ref
}

export function parseIssueKeys(raw: string) {
  const mode = parseIssueKeyMode(raw)
  if (mode !== undefined) return mode
  throw refusal(
    Inputs.IssueKeys,
    `must be auto, none, or project prefixes separated by commas or spaces (at most ${MAX_ISSUE_KEY_PREFIXES}, each a letter and 1 to 9 letters or digits, as ENG, OPS); got ${quote(raw)}.`
  )
}

/** The job-status input: the outcome, and the runner's own word for it. */
export function parseJobStatus(raw: string): EventOutcome {
  const status = raw.trim().toLowerCase()
  return { outcome: outcomeOf(status), status }
}

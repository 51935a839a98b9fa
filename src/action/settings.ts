/**
 * The action's input layer: the runner's strings in, one validated, typed `Settings` out.
 *
 * Every input is read here and nowhere else. Each kind of input has its own small parser, and
 * every rejection is an `InputError` whose message names the input and the accepted forms.
 * Offending values are quoted short and escaped, and the API key is never quoted.
 */
import {
  COMMANDS,
  FAIL_ON_ERROR_MODES,
  Inputs,
  MAX_ATTEMPTS_MAX,
  MAX_ATTEMPTS_MIN,
  MAX_CREATED_AT_FUTURE_SECONDS,
  TIMEOUT_SECONDS_MAX,
  TIMEOUT_SECONDS_MIN
} from './names.ts'
import type { Command, FailOnError, InputName } from './names.ts'
import { InputError } from '../errors.ts'

/** The change fields the user gave. Each is undefined when its input is empty. */
export interface ChangeFields {
  description?: string
  environment?: string
  service?: string
  version?: string
  user?: string
  comment?: string
  team?: string
  /** Trimmed, without empties or duplicates, in the order given. */
  labels?: string[]
  /** The parsed custom-metadata JSON value. */
  customMetadata?: unknown
  /** Integer Unix seconds. */
  createdAt?: number
}

/** Every input, read once, validated and typed. Nothing downstream reads inputs. */
export interface Settings {
  /** The API key; never printed. */
  apiKey: string
  /** The service's root: https, no query or fragment, always ending in "/". */
  baseUrl: URL
  command: Command
  change: ChangeFields
  /** Whether to add the run's GitHub metadata to custom_metadata. */
  githubMetadata: boolean
  heartbeatId?: string
  failOnError: FailOnError
  dryRun: boolean
  timeoutSeconds: number
  maxAttempts: number
  jobSummary: boolean
  /** The events input, raw (one JSON event, a JSON array, or NDJSON). */
  events?: string
  /** The events-file input: a path. */
  eventsFile?: string
  eventIds?: string[]
  changeId?: string
}

/** Returns the raw input (trimmed), or '' when it was not given. */
export type GetInput = (name: string) => string

/**
 * The defaults of the inputs that have one, as action.yml declares them. action.yml applies them
 * in real runs; readSettings applies them too, so that direct callers get the same behaviour.
 */
export const INPUT_DEFAULTS = {
  [Inputs.Command]: 'change',
  [Inputs.GithubMetadata]: 'true',
  [Inputs.FailOnError]: 'auto',
  [Inputs.DryRun]: 'false',
  [Inputs.TimeoutSeconds]: '30',
  [Inputs.MaxAttempts]: '4',
  [Inputs.JobSummary]: 'true'
} as const satisfies Partial<Record<InputName, string>>

/** An offending value is quoted only this far, so that 100 KB of junk never floods a log. */
const QUOTED_VALUE_MAX_CHARS = 40

/**
 * A Unix time above this is read as milliseconds. As seconds it would lie in the year 5138; as
 * milliseconds it is 1973-03-03, so no plausible time is ambiguous.
 */
const UNIX_MILLISECONDS_THRESHOLD = 1e11

const EXAMPLE_BASE_URL = 'https://api.example.com/'

/** Characters that could break or disguise a log line: controls, line separators, bidi overrides. */
const UNSAFE_IN_LOG = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu
const CONTROL_CHARACTER = /\p{Cc}/u
const CONTROL_CHARACTER_EXCEPT_LINE_BREAKS_AND_TAB = /[^\P{Cc}\t\n\r]/u

/** The value as a short, escaped JSON string literal, for an error message. */
function quote(raw: string): string {
  const shown = truncate(raw)
  const literal = JSON.stringify(shown).replace(UNSAFE_IN_LOG, escapeCodeUnit)
  return shown === raw ? literal : `${literal}… (${raw.length} characters)`
}

function truncate(text: string): string {
  const shown = text.slice(0, QUOTED_VALUE_MAX_CHARS)
  // Do not cut a surrogate pair in half.
  return shown.length < text.length && /[\ud800-\udbff]$/.test(shown) ? shown.slice(0, -1) : shown
}

function escapeCodeUnit(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`
}

function describeCharacter(raw: string, index: number): string {
  const codePoint = raw.codePointAt(index) ?? 0
  const position = Array.from(raw.slice(0, index)).length + 1
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')} at character ${position}`
}

/** `true` or `false`, in any letter case (a superset of YAML 1.2 core schema: True, TRUE). */
export function parseBoolean(name: string, raw: string): boolean {
  const value = raw.trim().toLowerCase()
  if (value === 'true') return true
  if (value === 'false') return false
  throw new InputError(name, `Input "${name}" must be true or false; got ${quote(raw)}.`)
}

/** A whole number in decimal digits, within [min, max]. */
export function parseWholeNumber(name: string, raw: string, min: number, max: number): number {
  const value = raw.trim()
  const number = /^[0-9]+$/.test(value) ? Number(value) : NaN
  if (number >= min && number <= max) return number
  throw new InputError(
    name,
    `Input "${name}" must be a whole number from ${min} to ${max}; got ${quote(raw)}.`
  )
}

/** One of COMMANDS, exactly. */
export function parseCommand(raw: string): Command {
  const value = raw.trim()
  const command = COMMANDS.find(known => known === value)
  if (command) return command
  throw new InputError(
    Inputs.Command,
    `Input "${Inputs.Command}" must be one of ${COMMANDS.join(', ')}; got ${quote(raw)}.`
  )
}

/** `auto`, `true` or `false`, in any letter case. */
export function parseFailOnError(raw: string): FailOnError {
  const value = raw.trim().toLowerCase()
  const mode = FAIL_ON_ERROR_MODES.find(known => known === value)
  if (mode) return mode
  throw new InputError(
    Inputs.FailOnError,
    `Input "${Inputs.FailOnError}" must be auto, true or false; got ${quote(raw)}.`
  )
}

/**
 * The service's root URL: https only, no credentials, query or fragment, and always ending in "/"
 * so that endpoint paths resolve below any path prefix. With `apiKey`, a URL that contains the
 * key is refused, since URLs get logged.
 */
export function parseBaseUrl(raw: string, apiKey = ''): URL {
  const name = Inputs.BaseUrl
  const value = raw.trim()
  const accepted = `an absolute HTTPS URL such as ${EXAMPLE_BASE_URL}`
  if (value === '') {
    throw new InputError(name, `Input "${name}" is required: the service's address, ${accepted}.`)
  }
  if (apiKey !== '' && [apiKey, encodeURIComponent(apiKey)].some(form => value.includes(form))) {
    throw new InputError(
      name,
      `Input "${name}" contains the API key. Give the key only in "${Inputs.ApiKey}": URLs are logged, so the key would leak.`
    )
  }
  // The URL parser silently drops tabs and line breaks; refuse them instead of guessing.
  const control = value.search(CONTROL_CHARACTER)
  if (control !== -1) {
    throw new InputError(
      name,
      `Input "${name}" must be ${accepted}; it contains the control character ${describeCharacter(value, control)}.`
    )
  }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new InputError(name, `Input "${name}" must be ${accepted}; got ${quote(raw)}.`)
  }
  if (url.protocol === 'http:') {
    throw new InputError(
      name,
      `Input "${name}" must use HTTPS: plain HTTP is refused because the API key would travel in clear text. Use https:// instead; got ${quote(raw)}.`
    )
  }
  if (url.protocol !== 'https:') {
    throw new InputError(
      name,
      `Input "${name}" must be ${accepted} (HTTPS is required); got ${quote(raw)}.`
    )
  }
  // Not quoted: the user name or password may be a secret.
  if (url.username !== '' || url.password !== '') {
    throw new InputError(
      name,
      `Input "${name}" must not contain a user name or password; the service authenticates with "${Inputs.ApiKey}".`
    )
  }
  // "https://host/?" has an empty search but still a "?"; in a parsed href "?" and "#" only delimit.
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(url.href)) {
    throw new InputError(
      name,
      `Input "${name}" must not have a query (?…) or fragment (#…): it is the root that endpoint paths are appended to, such as ${EXAMPLE_BASE_URL}.`
    )
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/'
  return url
}

// Unix seconds or milliseconds; a sign is accepted only to say "before 1970" rather than "bad form".
const UNIX_TIME = /^-?[0-9]+(?:\.[0-9]+)?$/
// A date, or a date-time with a time zone: a time without one would depend on the runner's zone.
const ISO_8601 =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,][0-9]+)?)?(Z|z|[+-][0-9]{2}(?::?[0-9]{2})?))?$/
const CREATED_AT_FORMS =
  'Unix seconds (1763719200), Unix milliseconds (1763719200000), an ISO 8601 date (2025-11-21) or an ISO 8601 date-time with a time zone (2025-11-21T10:00:00Z, 2025-11-21T12:00:00+02:00)'

/** The time a change happened, as integer Unix seconds; undefined when empty. */
export function parseCreatedAt(raw: string, nowMs: number): number | undefined {
  const value = raw.trim()
  if (value === '') return undefined
  const name = Inputs.CreatedAt
  let seconds: number | undefined
  if (UNIX_TIME.test(value)) {
    const number = Number(value)
    seconds = Math.abs(number) > UNIX_MILLISECONDS_THRESHOLD ? number / 1000 : number
  } else {
    const match = ISO_8601.exec(value)
    if (match) seconds = isoToSeconds(match)
  }
  if (Number.isNaN(seconds)) {
    throw new InputError(
      name,
      `Input "${name}" is not a real date and time (month 01-12, a day that exists in that month, hour 00-23, minute and second 00-59, offset up to ±23:59); got ${quote(raw)}.`
    )
  }
  if (seconds === undefined) {
    // A date-time without a zone would be read in the runner's zone, which is arbitrary.
    if (ISO_8601.test(`${value}Z`)) {
      throw new InputError(
        name,
        `Input "${name}" is a date-time without a time zone: add Z or an offset such as +02:00, since the runner's own zone is arbitrary; got ${quote(raw)}.`
      )
    }
    throw new InputError(name, `Input "${name}" must be ${CREATED_AT_FORMS}; got ${quote(raw)}.`)
  }
  // "+ 0" turns -0 into 0.
  const whole = Math.floor(seconds) + 0
  if (whole < 0) {
    throw new InputError(
      name,
      `Input "${name}" must not be before 1970-01-01T00:00:00Z; got ${quote(raw)}.`
    )
  }
  const latest = Math.floor(nowMs / 1000) + MAX_CREATED_AT_FUTURE_SECONDS
  if (whole > latest) {
    const readAs = whole <= 8.64e12 ? ` (read as ${new Date(whole * 1000).toISOString()})` : ''
    throw new InputError(
      name,
      `Input "${name}" must not lie more than ${MAX_CREATED_AT_FUTURE_SECONDS / 3600} hours in the future${readAs}; got ${quote(raw)}. Give the time the change happened, as ${CREATED_AT_FORMS}.`
    )
  }
  return whole
}

/** Unix seconds of a matched ISO 8601 date or date-time, or NaN when a field is out of range. */
function isoToSeconds(match: RegExpExecArray): number {
  const [, year, month, day, hour = '0', minute = '0', second = '0', zone = 'Z'] = match
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number)
  const offsetMinutes = parseOffsetMinutes(zone)
  const valid =
    mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo) && h <= 23 && mi <= 59 && s <= 59
  if (!valid || Number.isNaN(offsetMinutes)) return NaN
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  date.setUTCHours(h, mi, s, 0)
  return date.getTime() / 1000 - offsetMinutes * 60
}

function parseOffsetMinutes(zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0
  const digits = zone.slice(1).replace(':', '')
  const hours = Number(digits.slice(0, 2))
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0
  if (hours > 23 || minutes > 59) return NaN
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes)
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
}

/** The items, trimmed, without empties or duplicates, in first-seen order; undefined when none. */
function uniqueItems(items: readonly string[]): string[] | undefined {
  const unique = [...new Set(items.map(item => item.trim()).filter(item => item !== ''))]
  return unique.length > 0 ? unique : undefined
}

function rejectControlCharacters(name: string, value: string, allowLineBreaks = false): void {
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

/** Labels separated by commas or line breaks; undefined when none remain. */
export function parseLabels(raw: string): string[] | undefined {
  const labels = uniqueItems(raw.split(/\r\n|[\r\n,]/))
  for (const label of labels ?? []) {
    rejectControlCharacters(Inputs.Labels, label)
  }
  return labels
}

/** Any JSON value; undefined when empty. */
export function parseJson(name: string, raw: string): unknown {
  if (raw.trim() === '') return undefined
  try {
    return JSON.parse(raw)
  } catch (error) {
    throw new InputError(
      name,
      `Input "${name}" must be valid JSON, such as {"ticket": "OPS-42"}: ${describeJsonError(raw, error)}; got ${quote(raw)}.`
    )
  }
}

/**
 * What is wrong with the JSON and where, from the parser's message. The parser's own wording is
 * used only where it carries no input text (some of its messages quote the input).
 */
function describeJsonError(raw: string, error: unknown): string {
  const message = error instanceof Error ? error.message : ''
  const located = /^([^"]+?)(?: in JSON)? at position (\d+)/.exec(message)
  if (located) {
    const position = Number(located[2])
    const before = raw.slice(0, position).split('\n')
    const where = `line ${before.length}, column ${before[before.length - 1].length + 1}`
    return `${located[1].charAt(0).toLowerCase()}${located[1].slice(1)} at ${where}`
  }
  if (message.startsWith('Unexpected end of JSON input')) return 'it ends early'
  const token = /^Unexpected token '([\s\S])'/u.exec(message)
  if (token) return `unexpected character ${quote(token[1])}`
  return 'it cannot be parsed'
}

/**
 * Event ids: a JSON array of strings when the value starts with "["; otherwise one per line when
 * there is a line break (so ids may contain commas), else separated by commas. Trimmed, without
 * empties or duplicates, in order; undefined when none remain.
 */
export function parseEventIds(raw: string): string[] | undefined {
  const name = Inputs.EventIds
  const value = raw.trim()
  let items: string[]
  if (value.startsWith('[')) {
    const accepted = `Input "${name}" starts with "[", so it must be a JSON array of non-empty strings, such as ["id-1", "id-2"]`
    let parsed: unknown
    try {
      parsed = JSON.parse(value)
    } catch (error) {
      throw new InputError(
        name,
        `${accepted}: ${describeJsonError(value, error)}; got ${quote(raw)}.`
      )
    }
    if (!Array.isArray(parsed)) {
      throw new InputError(name, `${accepted}; got ${quote(raw)}.`)
    }
    const bad = parsed.findIndex(item => typeof item !== 'string' || item.trim() === '')
    if (bad !== -1) {
      throw new InputError(
        name,
        `${accepted}; element ${bad + 1} is ${describeJsonValue(parsed[bad])}.`
      )
    }
    items = parsed as string[]
  } else {
    items = value.split(/[\r\n]/.test(value) ? /\r\n|[\r\n]/ : ',')
  }
  const ids = uniqueItems(items)
  for (const id of ids ?? []) checkId(name, id)
  return ids
}

/** A parsed JSON value as short JSON text, for an error message. */
function describeJsonValue(value: unknown): string {
  const text = JSON.stringify(value)
  const shown = truncate(text).replace(UNSAFE_IN_LOG, escapeCodeUnit)
  return shown.length < text.length ? `${shown}…` : shown
}

/** Ids end up in URL paths and queries: no control characters, and not "." or "..". */
function checkId(name: string, id: string): void {
  rejectControlCharacters(name, id)
  if (id === '.' || id === '..') {
    throw new InputError(name, `Input "${name}" must be an id, not ${quote(id)}.`)
  }
}

/** Free text: undefined when blank; otherwise kept exactly as given. */
function parseText(name: string, raw: string, multiline: boolean): string | undefined {
  if (raw.trim() === '') return undefined
  rejectControlCharacters(name, raw, multiline)
  return raw
}

function parseId(name: string, raw: string): string | undefined {
  const id = raw.trim()
  if (id === '') return undefined
  checkId(name, id)
  return id
}

/** The key travels in an HTTP header, so only visible ASCII can be sent. Never quoted. */
function parseApiKey(raw: string): string {
  const name = Inputs.ApiKey
  const key = raw.trim()
  if (key === '') {
    throw new InputError(
      name,
      `Input "${name}" is required: pass the service's API key from a secret, for example \${{ secrets.CHANGE_TRACKING_API_KEY }}.`
    )
  }
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new InputError(
      name,
      `Input "${name}" may contain only visible ASCII characters (no spaces or line breaks), since it is sent in an HTTP header; check that the whole key, and only the key, was copied.`
    )
  }
  return key
}

/**
 * Reads, validates and types every input. Pure: `getInput` is the only source, and `now`
 * (milliseconds since the epoch, default Date.now()) bounds created-at.
 * Throws InputError naming the first bad input.
 */
export function readSettings(getInput: GetInput, options: { now?: number } = {}): Settings {
  const now = options.now ?? Date.now()
  const apiKey = parseApiKey(getInput(Inputs.ApiKey))
  // Refused before anything is parsed or quoted: any other input may be logged, or sent to the
  // service in clear.
  for (const name of Object.values(Inputs)) {
    if (name !== Inputs.ApiKey && getInput(name).includes(apiKey)) {
      throw new InputError(
        name,
        `Input "${name}" contains the value of input "${Inputs.ApiKey}". Give the key only in "${Inputs.ApiKey}": other inputs may be logged or sent to the service in clear.`
      )
    }
  }
  const withDefault = (name: keyof typeof INPUT_DEFAULTS): string =>
    getInput(name).trim() || INPUT_DEFAULTS[name]

  const events = getInput(Inputs.Events)
  const settings: Settings = {
    apiKey,
    baseUrl: parseBaseUrl(getInput(Inputs.BaseUrl), apiKey),
    command: parseCommand(withDefault(Inputs.Command)),
    change: {
      description: parseText(Inputs.Description, getInput(Inputs.Description), true),
      environment: parseText(Inputs.Environment, getInput(Inputs.Environment), false),
      service: parseText(Inputs.Service, getInput(Inputs.Service), false),
      version: parseText(Inputs.Version, getInput(Inputs.Version), false),
      user: parseText(Inputs.User, getInput(Inputs.User), false),
      comment: parseText(Inputs.Comment, getInput(Inputs.Comment), true),
      team: parseText(Inputs.Team, getInput(Inputs.Team), false),
      labels: parseLabels(getInput(Inputs.Labels)),
      customMetadata: parseJson(Inputs.CustomMetadata, getInput(Inputs.CustomMetadata)),
      createdAt: parseCreatedAt(getInput(Inputs.CreatedAt), now)
    },
    githubMetadata: parseBoolean(Inputs.GithubMetadata, withDefault(Inputs.GithubMetadata)),
    heartbeatId: parseId(Inputs.HeartbeatId, getInput(Inputs.HeartbeatId)),
    failOnError: parseFailOnError(withDefault(Inputs.FailOnError)),
    dryRun: parseBoolean(Inputs.DryRun, withDefault(Inputs.DryRun)),
    timeoutSeconds: parseWholeNumber(
      Inputs.TimeoutSeconds,
      withDefault(Inputs.TimeoutSeconds),
      TIMEOUT_SECONDS_MIN,
      TIMEOUT_SECONDS_MAX
    ),
    maxAttempts: parseWholeNumber(
      Inputs.MaxAttempts,
      withDefault(Inputs.MaxAttempts),
      MAX_ATTEMPTS_MIN,
      MAX_ATTEMPTS_MAX
    ),
    jobSummary: parseBoolean(Inputs.JobSummary, withDefault(Inputs.JobSummary)),
    events: events.trim() === '' ? undefined : events,
    eventsFile: parseText(Inputs.EventsFile, getInput(Inputs.EventsFile).trim(), false),
    eventIds: parseEventIds(getInput(Inputs.EventIds)),
    changeId: parseId(Inputs.ChangeId, getInput(Inputs.ChangeId))
  }
  checkCommandRequirements(settings)
  return settings
}

/** The inputs each command cannot do without, checked once every input is valid. */
function checkCommandRequirements(settings: Settings): void {
  const { command } = settings
  const require = (name: InputName, given: unknown, what: string): void => {
    if (given !== undefined) return
    throw new InputError(name, `Input "${name}" is required when command is "${command}": ${what}.`)
  }
  switch (command) {
    case 'heartbeat':
      require(Inputs.HeartbeatId, settings.heartbeatId, 'the id of the heartbeat monitor, from its page in the web application')
      break
    case 'get-change':
      require(Inputs.ChangeId, settings.changeId, 'the id of the change to read back')
      break
    case 'event-results':
      require(Inputs.EventIds, settings.eventIds, 'the event ids, separated by commas or newlines, or a JSON array')
      break
    case 'events':
      if (settings.events !== undefined && settings.eventsFile !== undefined) {
        throw new InputError(
          Inputs.Events,
          `Inputs "${Inputs.Events}" and "${Inputs.EventsFile}" are both given; when command is "events", give exactly one of them.`
        )
      }
      require(Inputs.Events, settings.events ??
        settings.eventsFile, `give the events inline in "${Inputs.Events}", or a path to a file of events in "${Inputs.EventsFile}"`)
      break
  }
}

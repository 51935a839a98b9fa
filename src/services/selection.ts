/** Which services a deploy touched: path patterns against the files the caller says changed. */
import picomatch from 'picomatch'
import type { ServiceSpec } from '../settings.ts'
import { formatSeconds, plural } from '../helpers/text.ts'
import { runWithin } from '../helpers/time-bound.ts'

/** A file changed since the previous deploy; a rename names both of its paths, and counts once. */
export interface ChangedPath {
  path: string
  previousPath?: string
}

export interface ChangedFiles {
  files?: ChangedPath[]
  /** False when the list was cut (GitHub's compare lists at most 300 files) or partly unknown. */
  complete: boolean
  /** Why the list is unknown or incomplete, mid-sentence ("no previous deploy was found"). */
  reason?: string
}

export interface ServiceDecision {
  name: string
  recorded: boolean
  /** Why, as a short phrase for the summary and the dry-run listing. */
  reason: string
  /** The first MAX_MATCHED_PATHS changed files that matched, by their current path, in order. */
  matchedPaths: string[]
  /** How many changed files matched in all, a rename once. */
  matchedCount: number
}

export interface ServiceSelection {
  /** One per service, in the order of the input. */
  decisions: ServiceDecision[]
  /** Why every service is recorded (the files unknown or incomplete, or matching too slow). */
  allRecordedBecause?: string
}

/**
 * Dot files match, "/" separates everywhere, case counts; an unbalanced bracket is an error. The
 * `s` flag lets `**` cross a line break or line separator as any other character: anyone who can
 * land a file chooses its name, and a path must not escape its patterns by one.
 */
export const GLOB_OPTIONS: picomatch.PicomatchOptions = {
  dot: true,
  windows: false,
  strictBrackets: true,
  flags: 's'
}

/** A change's metadata lists at most this many matched paths, so that it stays small. */
export const MAX_MATCHED_PATHS = 20

/**
 * The whole selection's bound. picomatch compiles `*` to a lazy `[^/]*?`: **\/*a*a*a*a*a*a*a*b
 * backtracks for minutes on a path it fails to match, and anyone who can land a file chooses the
 * paths; 50 services and 300 files take milliseconds. Past it every service is recorded.
 */
export const SERVICE_SELECTION_BUDGET_MS = 2000

/** Synchronous; returns soon after `budgetMs` at worst, whatever the patterns and paths. */
export function selectServices(
  specs: readonly ServiceSpec[],
  changed: ChangedFiles,
  budgetMs = SERVICE_SELECTION_BUDGET_MS
): ServiceSelection {
  const because = changed.reason ? ` (${changed.reason})` : ''
  const everyService = (reason: string, why: string): ServiceSelection => ({
    decisions: specs.map(spec => unmatched(spec, reason)),
    allRecordedBecause: `Every service is selected: ${why}`
  })
  const { files, complete } = changed
  if (files === undefined) {
    return everyService(
      'selected: the changed files are unknown',
      `the files changed since the previous deploy are unknown${because}.`
    )
  }
  const matched = runWithin(budgetMs, () => specs.map(spec => decide(spec, files, complete)))
  if (!matched.finished) {
    return everyService(
      'selected: matching the changed files took too long',
      `matching the services' patterns against the changed files took longer than ${formatSeconds(budgetMs)}. Simplify the patterns: several * in one folder or file name, as **/*a*a*b, make a match slow.`
    )
  }
  if (complete) return { decisions: matched.value }
  const why = `the list of files changed since the previous deploy is incomplete${because}; ${plural(files.length, 'file')} known.`
  return { decisions: matched.value, allRecordedBecause: `Every service is selected: ${why}` }
}

/** A service whose patterns were not matched against any file. */
function unmatched(spec: ServiceSpec, reason: string): ServiceDecision {
  const why = spec.patterns.length === 0 ? 'always selected: no patterns' : reason
  return { name: spec.name, recorded: true, reason: why, matchedPaths: [], matchedCount: 0 }
}

/**
 * Whether a path is a service's, compiled once: it matches a pattern without "!" and none with.
 * A service without patterns has no path of its own: picomatch of no pattern matches nothing.
 */
export function matcherOf(spec: ServiceSpec): (path: string) => boolean {
  const included = spec.patterns.filter(p => !p.startsWith('!'))
  const excluded = spec.patterns.filter(p => p.startsWith('!')).map(p => p.slice(1))
  const includes = picomatch(included, GLOB_OPTIONS)
  const excludes = picomatch(excluded, GLOB_OPTIONS)
  return path => includes(path) && !excludes(path)
}

/** A rename touches the service that owned the file as much as the one that owns it now. */
export const touches = (matches: (path: string) => boolean, file: ChangedPath): boolean =>
  matches(file.path) || (file.previousPath !== undefined && matches(file.previousPath))

function decide(spec: ServiceSpec, files: ChangedPath[], complete: boolean): ServiceDecision {
  if (spec.patterns.length === 0) return unmatched(spec, '')
  const matches = matcherOf(spec)
  const touched = files.filter(file => touches(matches, file))
  const count = touched.length
  const matching = `${plural(count, 'changed file')} ${count === 1 ? 'matches' : 'match'}`
  let reason = `selected: ${matching}`
  if (!complete) reason = `selected: the changed files are incomplete (${matching} so far)`
  else if (count === 0) reason = 'skipped: no changed file matches its patterns'
  return {
    name: spec.name,
    recorded: !complete || count > 0,
    reason,
    matchedPaths: touched.slice(0, MAX_MATCHED_PATHS).map(file => file.path),
    matchedCount: count
  }
}

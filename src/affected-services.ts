/**
 * Which services a deploy touched: each service's path patterns against the files changed since
 * the previous deploy. Knows nothing about inputs or GitHub; the caller gives the changed files.
 */
import picomatch from 'picomatch'
import { plural } from './text.ts'

/** One service of the `services` input. */
export interface ServiceSpec {
  /** The service's name, as sent in the change's `service` field. */
  name: string
  /** Glob patterns relative to the repository root; a leading "!" excludes. Empty: always recorded. */
  patterns: string[]
  /** The 1-based line of the input it came from, for messages. */
  line: number
}

/** The files changed since the previous deploy, as far as they are known. */
export interface ChangedFiles {
  /** Repository-relative paths with "/" separators; undefined when unknown. */
  files?: string[]
  /** False when the list was cut (GitHub's compare lists at most 300 files) or partly unknown. */
  complete: boolean
  /** Why the list is unknown or incomplete, mid-sentence ("no previous deploy was found"). */
  reason?: string
}

/** What was decided for one service, and on what grounds. */
export interface ServiceDecision {
  name: string
  /** Whether a change is recorded for this service. */
  recorded: boolean
  /** Why, as a short phrase for the summary and the dry-run listing. */
  reason: string
  /** The first MAX_MATCHED_PATHS changed paths that matched, in the order of the changed list. */
  matchedPaths: string[]
  /** How many changed paths matched in all (0 for a service without patterns). */
  matchedCount: number
}

export interface ServiceSelection {
  /** One decision per service, in the order of the input. */
  decisions: ServiceDecision[]
  /**
   * Set when every service is recorded because the changed files are unknown or incomplete: one
   * sentence, for the summary and a notice.
   */
  allRecordedBecause?: string
}

/**
 * How patterns match, for the parser and the selection alike:
 * - dot: `*` and `**` match dotfiles and dot folders (`.github/**`, `**\/.env`), as users expect
 *   of paths in a repository, where nothing is hidden;
 * - windows: false: changed paths always use "/", whatever the runner's platform;
 * - strictBrackets: an unbalanced bracket, brace or parenthesis is an error, not a pattern that
 *   silently matches nothing.
 * Matching is case-sensitive, like Git paths.
 */
export const GLOB_OPTIONS: picomatch.PicomatchOptions = {
  dot: true,
  windows: false,
  strictBrackets: true
}

/** A change's metadata lists at most this many matched paths, so that it stays small. */
export const MAX_MATCHED_PATHS = 20

type PathMatcher = (path: string) => boolean

/**
 * A service's matcher, compiled once: a path matches when it matches at least one pattern without
 * "!" and none of the "!" patterns.
 */
export function compileServiceMatcher(patterns: string[]): PathMatcher {
  const included = patterns.filter(pattern => !pattern.startsWith('!'))
  const excluded = patterns.filter(pattern => pattern.startsWith('!')).map(p => p.slice(1))
  const includes = picomatch(included, GLOB_OPTIONS)
  if (excluded.length === 0) return includes
  const excludes = picomatch(excluded, GLOB_OPTIONS)
  return path => includes(path) && !excludes(path)
}

/** Decides, for each service, whether the deploy touched it. */
export function selectServices(specs: ServiceSpec[], changed: ChangedFiles): ServiceSelection {
  const files = changed.files
  const known = files !== undefined && changed.complete
  const decisions = specs.map(spec => decide(spec, files, known))
  if (known) return { decisions }
  const because = changed.reason ? ` (${changed.reason})` : ''
  const allRecordedBecause =
    files === undefined
      ? `Every service is recorded: the files changed since the previous deploy are unknown${because}.`
      : `Every service is recorded: the list of files changed since the previous deploy is incomplete${because}; ${plural(files.length, 'file')} known.`
  return { decisions, allRecordedBecause }
}

function decide(spec: ServiceSpec, files: string[] | undefined, known: boolean): ServiceDecision {
  const decision = { name: spec.name, matchedPaths: [] as string[], matchedCount: 0 }
  if (spec.patterns.length === 0) {
    return { ...decision, recorded: true, reason: 'always recorded: no patterns' }
  }
  if (files === undefined) {
    return { ...decision, recorded: true, reason: 'recorded: the changed files are unknown' }
  }
  const matches = compileServiceMatcher(spec.patterns)
  for (const file of files) {
    if (!matches(file)) continue
    decision.matchedCount++
    if (decision.matchedPaths.length < MAX_MATCHED_PATHS) decision.matchedPaths.push(file)
  }
  const matching = `${plural(decision.matchedCount, 'changed file')} ${decision.matchedCount === 1 ? 'matches' : 'match'}`
  if (!known) {
    return {
      ...decision,
      recorded: true,
      reason: `recorded: the changed files are incomplete (${matching} so far)`
    }
  }
  if (decision.matchedCount === 0) {
    return { ...decision, recorded: false, reason: 'skipped: no changed file matches its patterns' }
  }
  return { ...decision, recorded: true, reason: `recorded: ${matching}` }
}

/**
 * A change's default description, composed here and nowhere else, at most MAX_DESCRIPTION_CHARS:
 * the event's own words, how the deploy ended, then what shipped. When it must be cut, what
 * shipped gives way first and how the deploy ended stays whole. For example:
 *   Deploy 6113728 on main of acme/shop: 3 commits since 9f2c1d0 (#41 Add login, #42 Fix cart, +1 more)
 *   Release v1.2.3 of acme/shop: Add login (#41)                  (one commit: its first line)
 *   Deploy 9f2c1d0 of acme/shop to production: rollback from 6113728
 *   api: Deploy 6113728 on main of acme/shop: 4 matching files changed in 3 commits since 9f2c1d0
 *   Deploy d2c8cd8 on main of acme/shop failed after 4 min 12 s: 2 commits since 9f2c1d0
 */
import { ACTION_NAME } from './package.ts'
import { durationSeconds, formatDuration, OUTCOME_WORDS, type DeployRecord } from './deploy.ts'
import type { Shipped } from './shipped/types.ts'
import { collapseWhitespace, plural, truncateText } from './helpers/text.ts'

/** Long enough for the head, the count and a few pull requests; short enough to read at a glance. */
export const MAX_DESCRIPTION_CHARS = 200
/** Pull requests named in the description; the rest are "+N more". */
const MAX_DESCRIBED_PULL_REQUESTS = 3
/** A pull request title in the description is cut to this. */
const MAX_DESCRIBED_TITLE_CHARS = 60
/** A version that is not a commit hash (a tag, a build number) is cut to this. */
const MAX_VERSION_CHARS = 40
/** A commit hash as people read it. */
export const SHORT_SHA_LENGTH = 7
/** The description when nothing at all is known about the run. */
export const FALLBACK_DESCRIPTION = `Change recorded by ${ACTION_NAME}`

export interface DescriptionParts {
  /** The event's own sentence ("Release v1.2.3 of acme/shop"), when it is about this version. */
  event?: string
  repository?: string
  version?: string
  environment?: string
  shipped?: Shipped
  /** One service of several, and its changed files matching its patterns when those are known. */
  service?: { name: string; matchingFiles?: number }
  /** At a job's end: how the deploy ended. */
  deploy?: DeployRecord
}

export function describeChange(parts: DescriptionParts): string {
  const { deploy, service } = parts
  const words = oneLine(parts.event ?? '') || genericHead(parts)
  const head = service ? `${oneLine(service.name)}: ${words}` : words
  const seconds = deploy && durationSeconds(deploy)
  const after = seconds === undefined ? '' : ` after ${formatDuration(seconds)}`
  const outcome =
    deploy === undefined || deploy.outcome === 'success'
      ? ''
      : ` ${OUTCOME_WORDS[deploy.outcome]}${after}`
  const lead = `${truncateText(head, MAX_DESCRIPTION_CHARS - outcome.length)}${outcome}`
  const detail = parts.shipped && shippedDetail(parts.shipped, service?.matchingFiles)
  const room = MAX_DESCRIPTION_CHARS - Array.from(lead).length - 2
  if (!detail || room < 2) return lead
  const described = `${lead}: ${truncateText(oneLine(detail), room)}`
  return `${described}${pullRequestList(parts.shipped as Shipped, Array.from(described).length)}`
}

/** A commit hash cut to its usual short form; any other version (an image tag, say) cut short. */
export function shortSha(version: string): string {
  return /^[0-9a-f]{8,}$/i.test(version)
    ? version.slice(0, SHORT_SHA_LENGTH).toLowerCase()
    : truncateText(version, MAX_VERSION_CHARS)
}

/** One line: control characters and line separators (from titles, say) become one space. */
export function oneLine(text: string): string {
  return collapseWhitespace(text.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' '))
}

/** "Deploy acme/shop 6113728 to production", from what is known, when the event says nothing. */
function genericHead({ repository, version, environment }: DescriptionParts): string {
  if (!repository && !version) return FALLBACK_DESCRIPTION
  return [
    'Deploy',
    repository,
    version && shortSha(oneLine(version)),
    environment && `to ${environment}`
  ]
    .filter(Boolean)
    .join(' ')
}

/** What shipped since the previous deploy, when the lookup knows it. */
function shippedDetail(shipped: Shipped, matchingFiles: number | undefined): string | undefined {
  const previous = shipped.previousSha && shortSha(shipped.previousSha)
  if (shipped.rollback && previous) return `rollback from ${previous}`
  const count = shipped.commitCount
  const since = previous ? ` since ${previous}` : ''
  const matching =
    matchingFiles !== undefined ? `${plural(matchingFiles, 'matching file')} changed in ` : ''
  if (count === 0) return `no new commits${since}`
  const head = shipped.commits.at(-1)
  if (count === 1 && head && matching === '') return head.message || `1 commit${since}`
  if (count !== undefined) return `${matching}${plural(count, 'commit')}${since}`
  return previous ? `${matching}commits${since}` : undefined
}

/**
 * " (#41 Add login, #42 Fix cart, +1 more)", as many as fit; '' when there are none. When commits
 * were left unread the count is unknown: "+more" when more were found than fit, and no bare count.
 * On GitLab, merge requests as GitLab names them: " (!41 Add login, !42 Fix cart)".
 */
function pullRequestList(shipped: Shipped, used: number): string {
  // One commit described by its own line already names its pull request.
  if (shipped.rollback || shipped.commitCount === 1 || shipped.pullRequests.length === 0) return ''
  const gitlab = shipped.forge?.kind === 'gitlab'
  const mark = gitlab ? '!' : '#'
  const items: string[] = []
  for (const pull of shipped.pullRequests.slice(0, MAX_DESCRIBED_PULL_REQUESTS)) {
    const item = pull.title
      ? `${mark}${pull.number} ${truncateText(oneLine(pull.title), MAX_DESCRIBED_TITLE_CHARS)}`
      : `${mark}${pull.number}`
    if (used + listText([...items, item], shipped).length > MAX_DESCRIPTION_CHARS) break
    items.push(item)
  }
  if (items.length === 0) {
    const noun = gitlab ? 'merge request' : 'pull request'
    const onlyCount = ` (${plural(shipped.pullRequestCount, noun)})`
    const fits = used + onlyCount.length <= MAX_DESCRIPTION_CHARS
    return fits && shipped.pullRequestsComplete ? onlyCount : ''
  }
  return listText(items, shipped)
}

function listText(items: string[], shipped: Shipped): string {
  const more = shipped.pullRequestCount - items.length
  const rest = shipped.pullRequestsComplete ? `+${more} more` : '+more'
  return ` (${[...items, ...(more > 0 ? [rest] : [])].join(', ')})`
}

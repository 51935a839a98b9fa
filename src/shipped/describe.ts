/**
 * The description of a deploy when what it ships is known, readable at a glance and at most
 * MAX_DESCRIPTION_CHARS long:
 *   Deploy acme/shop 6113728 to production: 3 commits since 9f2c1d0 (#41 Add login, #42 Fix cart, +1 more)
 *   Deploy acme/shop 6113728 to production: Add login (#41)        (one commit: its first line)
 *   Rollback acme/shop to 9f2c1d0 in production (was 6113728)
 *   Deploy api of acme/shop 6113728 to production: 4 matching files changed in 3 commits since 9f2c1d0
 */
import { collapseWhitespace, plural, truncateText } from '../text.ts'
import { isFullSha } from './compare.ts'
import type { Shipped } from './types.ts'

/** Long enough for the head, the count and a few pull requests; short enough to read at a glance. */
export const MAX_DESCRIPTION_CHARS = 200
/** Pull requests named in the description; the rest are "+N more". */
export const MAX_DESCRIBED_PULL_REQUESTS = 3
/** A pull request title in the description is cut to this. */
const MAX_DESCRIBED_TITLE_CHARS = 60
/** A version that is not a SHA (a tag, a build number) is cut to this. */
const MAX_VERSION_CHARS = 40
const SHORT_SHA_CHARS = 7

export interface DescribeOptions {
  repository?: string
  version?: string
  environment?: string
  shipped?: Shipped
  /** For one of several services. */
  serviceName?: string
  /** Changed files matching the service's patterns, when the changed files are known. */
  matchingFiles?: number
}

/** undefined when nothing is known that the context's own description does not say. */
export function describeDeploy(options: DescribeOptions): string | undefined {
  const { shipped } = options
  const knowsShipped =
    shipped !== undefined &&
    (shipped.previousSha !== undefined ||
      shipped.commitCount !== undefined ||
      shipped.commits.length > 0)
  if (!knowsShipped && options.serviceName === undefined) return undefined

  const subject = [
    options.serviceName && collapseWhitespace(options.serviceName),
    options.serviceName && options.repository && 'of',
    options.repository
  ]
    .filter(Boolean)
    .join(' ')
  const version = options.version ? shortVersion(options.version) : undefined
  const environment = options.environment && collapseWhitespace(options.environment)
  const previous = shipped?.previousSha && shortVersion(shipped.previousSha)

  if (shipped?.rollback && version && previous) {
    const where = environment ? ` in ${environment}` : ''
    return bounded(`Rollback ${subject} to ${version}${where} (was ${previous})`)
  }
  const head = ['Deploy', subject, version, environment && `to ${environment}`]
    .filter(Boolean)
    .join(' ')
  const detail =
    shipped && knowsShipped ? shippedDetail(shipped, previous, options.matchingFiles) : undefined
  if (!detail) return bounded(head)
  const described = `${head}: ${detail}`
  return bounded(`${described}${pullRequestList(shipped as Shipped, described.length)}`)
}

function shippedDetail(
  shipped: Shipped,
  previous: string | undefined,
  matchingFiles: number | undefined
): string | undefined {
  const count = shipped.commitCount
  const since = previous ? ` since ${previous}` : ''
  const matching =
    matchingFiles !== undefined ? `${plural(matchingFiles, 'matching file')} changed in ` : ''
  if (count === 0) return previous ? `no new commits${since}` : 'no new commits'
  const head = shipped.commits.at(-1)
  if (count === 1 && head && matching === '') return head.message || `1 commit${since}`
  if (count !== undefined) return `${matching}${plural(count, 'commit')}${since}`
  return previous ? `${matching}commits${since}` : undefined
}

/** " (#41 Add login, #42 Fix cart, +1 more)", as many as fit; '' when there are none. */
function pullRequestList(shipped: Shipped, used: number): string {
  if (shipped.pullRequestCount === 0 || shipped.pullRequests.length === 0) return ''
  // One commit described by its own line already names its pull request.
  if (shipped.commitCount === 1) return ''
  const items: string[] = []
  for (const pull of shipped.pullRequests.slice(0, MAX_DESCRIBED_PULL_REQUESTS)) {
    const title = pull.title
      ? ` ${truncateText(collapseWhitespace(pull.title), MAX_DESCRIBED_TITLE_CHARS)}`
      : ''
    const candidate = [...items, `#${pull.number}${title}`]
    const more = shipped.pullRequestCount - candidate.length
    const text = listText(candidate, more)
    if (used + text.length > MAX_DESCRIPTION_CHARS) break
    items.push(`#${pull.number}${title}`)
  }
  const more = shipped.pullRequestCount - items.length
  if (items.length === 0) {
    const onlyCount = ` (${plural(more, 'pull request')})`
    return used + onlyCount.length <= MAX_DESCRIPTION_CHARS ? onlyCount : ''
  }
  return listText(items, more)
}

function listText(items: string[], more: number): string {
  return ` (${[...items, ...(more > 0 ? [`+${more} more`] : [])].join(', ')})`
}

function shortVersion(version: string): string {
  const trimmed = collapseWhitespace(version)
  return isFullSha(trimmed)
    ? trimmed.slice(0, SHORT_SHA_CHARS).toLowerCase()
    : truncateText(trimmed, MAX_VERSION_CHARS)
}

function bounded(text: string): string {
  return truncateText(collapseWhitespace(text), MAX_DESCRIPTION_CHARS)
}

/**
 * Pull requests named by the commit messages GitHub writes when it merges one: a squash merge's
 * "Title (#123)" and a merge commit's "Merge pull request #123 from owner/branch" (with the
 * title as the message body's first line). Titles come from those messages when they hold one,
 * else from GET /pulls/{number} for at most MAX_PULL_REQUEST_TITLES of them.
 */
import { collapseWhitespace } from '../text.ts'
import type { GitHub } from './github-client.ts'
import type { LookupQuery, Shipped, ShippedPullRequest } from './types.ts'
import { failureIn, type LookupError } from './warning.ts'

/** Pull requests listed; the count is always given in full. Keeps custom_metadata small. */
export const MAX_PULL_REQUESTS = 20
/** GET /pulls/{number} calls per lookup, for titles the messages do not give. */
export const MAX_PULL_REQUEST_TITLES = 3
/** A title longer than this is cut: GitHub's own limit is 256. */
export const MAX_PULL_REQUEST_TITLE_CHARS = 256

const SQUASH_SUFFIX = /\(#(\d{1,9})\)$/
const MERGE = /^Merge pull request #(\d{1,9}) from \S/

/** The pull request a commit message names, when GitHub wrote it for a merge. */
export function pullRequestInMessage(
  message: string
): { number: number; title?: string } | undefined {
  const lines = message.split(/\r\n|\r|\n/)
  const first = lines[0].trim()
  const merge = MERGE.exec(first)
  if (merge)
    return titled(
      Number(merge[1]),
      lines.slice(1).find(line => line.trim() !== '')
    )
  const squash = SQUASH_SUFFIX.exec(first)
  return squash ? titled(Number(squash[1]), first.slice(0, squash.index)) : undefined
}

function titled(number: number, title = ''): { number: number; title?: string } {
  const collapsed = collapseWhitespace(title).slice(0, MAX_PULL_REQUEST_TITLE_CHARS)
  return collapsed ? { number, title: collapsed } : { number }
}

/**
 * The pull requests of commit messages (oldest first): each once, in the order of its first
 * mention, titled by its messages or else by `titles`, with a link built from the server URL
 * (never taken from an answer).
 */
export function pullRequestsIn(
  messages: readonly string[],
  repositoryUrl: string,
  titles?: ReadonlyMap<number, string>
): Pick<Shipped, 'pullRequests' | 'pullRequestCount'> {
  const found = new Map<number, string | undefined>()
  for (const pull of messages.map(pullRequestInMessage)) {
    if (pull && pull.number > 0) found.set(pull.number, found.get(pull.number) ?? pull.title)
  }
  const all = [...found].map(([number, title]) => ({
    ...titled(number, title ?? titles?.get(number)),
    url: `${repositoryUrl}/pull/${number}`
  }))
  return { pullRequests: all.slice(-MAX_PULL_REQUESTS), pullRequestCount: all.length }
}

/** The titles the messages did not give, read for the first MAX_PULL_REQUEST_TITLES of them. */
export async function readMissingTitles(
  github: GitHub,
  query: LookupQuery,
  pullRequests: ShippedPullRequest[]
): Promise<{ titles: Map<number, string>; failure?: LookupError }> {
  const titles = new Map<number, string>()
  const untitled = pullRequests.filter(pull => !pull.title).slice(0, MAX_PULL_REQUEST_TITLES)
  for (const { number } of untitled) {
    if (github.callsLeft() < 1 || github.signal.aborted) break
    try {
      const { data } = await github.octokit.rest.pulls.get({ ...query.repo, pull_number: number })
      titles.set(number, data.title)
    } catch (error) {
      // A title is a nicety: one refusal says enough, and the others would be refused too.
      return { titles, failure: failureIn(error) }
    }
  }
  return { titles }
}

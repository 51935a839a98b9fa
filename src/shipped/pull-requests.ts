/**
 * Pull requests named by the commit messages GitHub writes when it merges one: a squash merge's
 * "Title (#123)" and a merge commit's "Merge pull request #123 from owner/branch" (with the
 * title as the message body's first line). Titles come from those messages when they hold one,
 * else from GET /pulls/{number} for at most MAX_PULL_REQUEST_TITLES of them.
 */
import { collapseWhitespace } from '../text.ts'
import { ApiError, type ApiFailure } from './api-failure.ts'
import type { GitHubClient } from './github-client.ts'
import type { ShippedPullRequest } from './types.ts'
import { textOf } from './untrusted.ts'

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
  const first = (lines[0] ?? '').trim()
  const merge = MERGE.exec(first)
  if (merge) {
    const body = lines.slice(1).find(line => line.trim() !== '')
    return withTitle(Number(merge[1]), body)
  }
  const squash = SQUASH_SUFFIX.exec(first)
  if (squash) return withTitle(Number(squash[1]), first.slice(0, squash.index))
  return undefined
}

function withTitle(number: number, title: string | undefined): { number: number; title?: string } {
  const collapsed = title === undefined ? '' : collapseWhitespace(title)
  return collapsed
    ? { number, title: collapsed.slice(0, MAX_PULL_REQUEST_TITLE_CHARS) }
    : { number }
}

/**
 * The pull requests of a list of commit messages (oldest first): each once, in the order of its
 * first mention, with a link built from the server URL (never taken from an answer).
 */
export function pullRequestsInMessages(
  messages: readonly string[],
  repositoryUrl: string
): ShippedPullRequest[] {
  const found = new Map<number, ShippedPullRequest>()
  for (const message of messages) {
    const pull = pullRequestInMessage(message)
    if (!pull || pull.number < 1) continue
    const known = found.get(pull.number)
    if (known) {
      known.title ??= pull.title
      continue
    }
    found.set(pull.number, { ...pull, url: `${repositoryUrl}/pull/${pull.number}` })
  }
  return [...found.values()]
}

/**
 * Reads the titles the messages did not give, for the first MAX_PULL_REQUEST_TITLES such pull
 * requests and within the calls left. Returns the failures; titles are filled in place.
 */
export async function readMissingTitles(
  client: GitHubClient,
  repository: { owner: string; repo: string },
  pullRequests: ShippedPullRequest[]
): Promise<ApiFailure[]> {
  const failures: ApiFailure[] = []
  const untitled = pullRequests.filter(pull => pull.title === undefined)
  for (const pull of untitled.slice(0, MAX_PULL_REQUEST_TITLES)) {
    if (client.remainingCalls < 1 || client.timedOut) break
    try {
      const { data } = await client.call(octokit =>
        octokit.rest.pulls.get({ ...repository, pull_number: pull.number })
      )
      const title = textOf(data?.title)
      if (title) pull.title = withTitle(pull.number, title).title
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      failures.push(error.failure)
      // A title is a nicety: one refusal says enough, and the others would be refused too.
      break
    }
  }
  return failures
}

/**
 * Pull requests named by the messages GitHub writes when it merges one: a squash merge's "Title
 * (#123)" and a merge commit's "Merge pull request #123 from owner/branch" (the title is the
 * body's first line); and merge requests by the last line GitLab writes in a merge commit, "See
 * merge request group/project!123", "See merge request !123" or the request's URL, and by a
 * squash's "Title (!123)". Titles come from those messages, else from GET /pulls/{number}.
 */
import { collapseWhitespace } from '../helpers/text.ts'
import type { GitHub } from './github-client.ts'
import { FORGE_PAGES, type Forge, type LookupQuery, type Shipped } from './types.ts'
import { failureIn, LookupError } from './warning.ts'

/** Pull requests listed; the count is always given in full. Keeps custom_metadata small. */
export const MAX_PULL_REQUESTS = 20
/** GET /pulls/{number} calls per lookup, for titles the messages do not give. */
export const MAX_PULL_REQUEST_TITLES = 3
/** A title longer than this is cut: GitHub's own limit is 256. */
export const MAX_PULL_REQUEST_TITLE_CHARS = 256

const SQUASH_SUFFIX = /\(#(\d{1,9})\)$/
/** On GitLab `#N` is an issue, and `!N` a merge request. */
const GITLAB_SUFFIX = /\(!(\d{1,9})\)$/
const MERGE = /^Merge pull request #(\d{1,9}) from \S/
/** `group/project!N`, `!N`, or the request's URL (group 1: its origin). Group 2: the number. */
const GITLAB_MERGE =
  /^See merge request (?:[^\s!]{0,400}!|(https?:\/\/[^\s/]{1,255})\/\S{1,400}\/-\/merge_requests\/)(\d{1,9})$/

type Titled = { number: number; title?: string }

/**
 * The pull request a commit message names, when GitHub or GitLab wrote it for a merge; a merge
 * request's URL only on the server of `web` (the forge's page).
 */
export function pullRequestInMessage(
  message: string,
  host?: Forge['kind'],
  web?: string
): Titled | undefined {
  const [line, ...body] = message.split(/\r\n|\r|\n/)
  const first = line.trim()
  const merge = host !== 'gitlab' && MERGE.exec(first)
  // A merge commit's title is its body's first line.
  if (merge) return titled(Number(merge[1]), body.find(isText))
  // GitLab's merge commit: the request on its last line, its title on the body's first.
  const last = body.findLast(isText)?.trim() ?? ''
  const request = GITLAB_MERGE.exec(last)
  const title = body.find(text => isText(text) && text.trim() !== last)
  const onServer = !request?.[1] || (!!web && request[1].toLowerCase() === new URL(web).origin)
  if (request && onServer) return titled(Number(request[2]), title)
  const squash = (host === 'gitlab' ? GITLAB_SUFFIX : SQUASH_SUFFIX).exec(first)
  return squash ? titled(Number(squash[1]), first.slice(0, squash.index)) : undefined
}

const isText = (text: string): boolean => text.trim() !== ''

function titled(number: number, title = ''): Titled {
  const collapsed = collapseWhitespace(title).slice(0, MAX_PULL_REQUEST_TITLE_CHARS)
  return collapsed ? { number, title: collapsed } : { number }
}

/**
 * The pull requests of commit messages (oldest first): each once, in the order of its first
 * mention, titled by a message or else by `titles`, linked on the forge's page (built from the
 * server URL, never an answer), unlinked without one.
 */
export function pullRequestsIn(
  messages: readonly string[],
  forge?: Forge,
  titles?: ReadonlyMap<number, string>
): Pick<Shipped, 'pullRequests' | 'pullRequestCount'> {
  const pullUrl = forge?.web && forge.web + FORGE_PAGES[forge.kind][1]
  const found = new Map<number, string | undefined>()
  for (const pull of messages.map(text => pullRequestInMessage(text, forge?.kind, forge?.web))) {
    if (pull && pull.number > 0) found.set(pull.number, found.get(pull.number) ?? pull.title)
  }
  const all = [...found].map(([number, title]) => ({
    ...titled(number, title ?? titles?.get(number)),
    ...(pullUrl && { url: `${pullUrl}${number}` })
  }))
  return { pullRequests: all.slice(-MAX_PULL_REQUESTS), pullRequestCount: all.length }
}

/** The titles the messages lack, for the first MAX_PULL_REQUEST_TITLES, while calls are left. */
export async function readMissingTitles(github: GitHub, query: LookupQuery, messages: string[]) {
  const titles = new Map<number, string>()
  const { pullRequests } = pullRequestsIn(messages)
  const untitled = pullRequests.filter(pull => !pull.title).slice(0, MAX_PULL_REQUEST_TITLES)
  for (const { number } of untitled) {
    if (github.callsLeft() < 1) break
    const { pulls } = github.octokit.rest
    const answer = await pulls.get({ ...query.repo, pull_number: number }).catch(failureIn)
    // A title is a nicety: one refusal says enough, and the others would be refused too.
    if (answer instanceof LookupError) return { titles, failure: answer }
    titles.set(number, answer.data.title)
  }
  return { titles }
}

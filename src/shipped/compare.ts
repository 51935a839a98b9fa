/**
 * The range since the previous deploy, from GET /repos/{owner}/{repo}/compare/{base}...{head}.
 * Pages after the first are asked for by number (never by a Link URL), newest first while calls
 * are left; one that fails costs only its commits and those before it.
 */
import { isJsonObject } from '../helpers/json.ts'
import { collapseWhitespace } from '../helpers/text.ts'
import type { ChangedPath } from '../services/selection.ts'
import type { GitHub } from './github-client.ts'
import type { LookupQuery, PreviousDeploy, Shipped, ShippedCommit } from './types.ts'
import { failureIn, LookupError } from './warning.ts'

/** GitHub's largest compare page. */
export const COMPARE_PAGE_SIZE = 250
/** GitHub cuts a compare's file list at this many files. */
export const MAX_COMPARE_FILES = 300
/** A commit's first line longer than this is cut: enough for any real title. */
export const MAX_COMMIT_MESSAGE_CHARS = 200
/** Only the start of a message is kept: its title, and the body's references and trailers. */
export const MAX_COMMIT_TEXT_READ_CHARS = 2000
/** An author longer than this is cut (GitHub logins are at most 39 characters). */
const MAX_AUTHOR_CHARS = 100

/** What a range of commits says (the compare's or a push's). */
export type Range = Pick<Shipped, 'commitCount' | 'commits' | 'messages' | 'messagesComplete'> &
  Pick<Shipped, 'changedFiles' | 'changedFilesComplete' | 'pullRequestsComplete' | 'rollback'>

/** A full commit SHA: 40 hex digits (SHA-1) or 64 (SHA-256 repositories). */
export function isFullSha(text: unknown): text is string {
  return typeof text === 'string' && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(text)
}

/**
 * Commits (oldest first) as a range keeps them, from an answer's or a push payload's fields,
 * unchecked: the author is the first name given (the login, then the name in the commit). A
 * message longer than what is read of it is cut, and said to be.
 */
export function readCommits(
  items: { sha: unknown; message: unknown; authors: unknown[]; committedAt: unknown }[]
): Pick<Range, 'commits' | 'messages' | 'messagesComplete'> {
  const commits: ShippedCommit[] = []
  const messages: string[] = []
  let cut = false
  for (const { sha, message, authors, committedAt } of items) {
    if (!isFullSha(sha)) continue
    const whole = typeof message === 'string' ? message : ''
    cut ||= whole.length > MAX_COMMIT_TEXT_READ_CHARS
    // Never half of a surrogate pair.
    const text = whole.slice(0, MAX_COMMIT_TEXT_READ_CHARS).replace(/[\ud800-\udbff]$/, '')
    const firstLine = collapseWhitespace(text.split(/\r\n|\r|\n/, 1)[0])
    const author = authors.find(name => typeof name === 'string' && name) as string | undefined
    const dated = typeof committedAt === 'string' && !Number.isNaN(Date.parse(committedAt))
    commits.push({
      sha: sha.toLowerCase(),
      message: firstLine.slice(0, MAX_COMMIT_MESSAGE_CHARS),
      // Cut before it is read: an author's name is whatever its commit says.
      ...(author && {
        author: Array.from(collapseWhitespace(author.slice(0, 4 * MAX_AUTHOR_CHARS)))
          .slice(0, MAX_AUTHOR_CHARS)
          .join('')
      }),
      ...(dated && { committedAt })
    })
    messages.push(text)
  }
  return { commits, messages, ...(cut && { messagesComplete: false as const }) }
}

/** The range, and the previous deploy with the full SHA the compare resolved its tag or branch to. */
export async function compareSince(
  github: GitHub,
  query: LookupQuery,
  previous: PreviousDeploy
): Promise<{ previous: PreviousDeploy; range?: Range; failure?: LookupError }> {
  if (previous.sha === query.version.toLowerCase()) {
    const none = { commitCount: 0, commits: [], messages: [], rollback: false, changedFiles: [] }
    return { previous, range: { ...none, changedFilesComplete: true, pullRequestsComplete: true } }
  }
  const basehead = `${previous.ref}...${query.version}`
  const { compareCommitsWithBasehead } = github.octokit.rest.repos
  const read = (page: number) =>
    compareCommitsWithBasehead({ ...query.repo, basehead, per_page: COMPARE_PAGE_SIZE, page })
      .then(answer => objectOf(answer.data))
      .catch(failureIn)
  const { first, range, failure } = await readComparePages(read, github.callsLeft)
  const base = objectOf(first?.base_commit).sha
  const sha = isFullSha(base) ? base.toLowerCase() : previous.sha
  return { previous: { ...previous, sha }, range, failure }
}

/** A compare answer, or any JSON object read from a forge: its fields are unchecked. */
export type Answer = Record<string, unknown>

/**
 * GitHub's compare read page by page, whichever client asks: page 1, then the newest pages while
 * calls are left (oldest first in the range); with page 1's answer.
 */
export async function readComparePages(
  read: (page: number) => Promise<Answer | LookupError>,
  callsLeft: () => number
): Promise<{ first?: Answer; range?: Range; failure?: LookupError }> {
  const first = await read(1)
  if (first instanceof LookupError) return { failure: first }
  const total = wholeNumber(first.total_commits)
  // Oldest first: each later page read goes after page 1, before the pages read earlier.
  const pages = [first.commits]
  let failure: LookupError | undefined
  let page = Math.ceil((total ?? 0) / COMPARE_PAGE_SIZE)
  while (page > 1 && !failure && callsLeft() > 0) {
    const answer = await read(page--)
    if (answer instanceof LookupError) failure = answer
    else pages.splice(1, 0, answer.commits)
  }
  const commits = pages.flatMap(listOf).map(({ sha, commit, author }) => {
    const { message, author: writer, committer } = objectOf(commit)
    const authors = [objectOf(author).login, objectOf(writer).name]
    return { sha, message, authors, committedAt: objectOf(committer).date }
  })
  const range: Range = {
    ...(total !== undefined && { commitCount: total }),
    ...readCommits(commits),
    rollback: first.status === 'behind',
    ...changedPaths(first.files, ['filename', 'previous_filename'], false, MAX_COMPARE_FILES),
    pullRequestsComplete: total !== undefined && commits.length >= total
  }
  return { first, range, failure }
}

/**
 * The paths a compare lists, by the names of a file's fields after and before (`back`: the compare
 * the other way, each rename turned round): complete when every one was read and they are fewer
 * than the forge's `bound`.
 */
export function changedPaths(
  files: unknown,
  [after, before]: [string, string],
  back: boolean,
  bound: number
): Pick<Range, 'changedFiles' | 'changedFilesComplete'> {
  if (!Array.isArray(files)) return { changedFilesComplete: false }
  const paths: ChangedPath[] = []
  for (const file of listOf(files)) {
    const [newPath, named] = [file[after], file[before]]
    if (typeof newPath !== 'string' || !newPath) continue
    const oldPath = typeof named === 'string' ? named : newPath
    const [path, previousPath] = back ? [oldPath, newPath] : [newPath, oldPath]
    paths.push(path === previousPath ? { path } : { path, previousPath })
  }
  const complete = paths.length === files.length && paths.length < bound
  return { changedFiles: paths, changedFilesComplete: complete }
}

/** A field of an answer as an object; {} when it is none. */
export const objectOf = (value: unknown): Answer => (isJsonObject(value) ? value : {})
/** A field of an answer as its objects; [] when it is no list. */
export const listOf = (value: unknown): Answer[] =>
  Array.isArray(value) ? value.filter(isJsonObject) : []
const wholeNumber = (value: unknown) =>
  Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined

/**
 * GET /repos/{owner}/{repo}/compare/{base}...{head}: the commits between the previous deploy and
 * the version, their exact count, the status (`behind` is a rollback) and the changed files.
 * GitHub lists commits oldest first, at most COMPARE_PAGE_SIZE a page; the first page also holds
 * the count and the files. Later pages are read newest first (the Link header's "last", then
 * "prev"), only while calls are left, so that the commits kept are the newest ones read. A later
 * page that fails costs only its commits: what the first page said is kept.
 */
import { collapseWhitespace } from '../text.ts'
import { ApiError, type ApiFailure } from './api-failure.ts'
import type { GitHubClient, Octokit } from './github-client.ts'
import type { ChangedPath, ShippedCommit } from './types.ts'
import {
  countOf,
  isFullSha,
  listOf,
  textOf,
  timestampOf,
  untrusted,
  type Untrusted
} from './untrusted.ts'

/** GitHub's largest compare page. */
export const COMPARE_PAGE_SIZE = 250
/** Commits listed; the count is always given in full. Keeps custom_metadata small. */
export const MAX_COMMITS = 50
/** GitHub cuts a compare's file list at this many files. */
export const MAX_COMPARE_FILES = 300
/** A commit's first line longer than this is cut: enough for any real title. */
export const MAX_COMMIT_MESSAGE_CHARS = 200
/** A longer Link header is not read: GitHub's are a few hundred characters. */
export const MAX_LINK_HEADER_CHARS = 8 * 1024
/** Only the start of a message is kept for finding its pull request (title and first body line). */
const MAX_MESSAGE_READ_CHARS = 2000

type CompareData = Awaited<
  ReturnType<Octokit['rest']['repos']['compareCommitsWithBasehead']>
>['data']
type CompareCommit = CompareData['commits'][number]
type ComparedFile = NonNullable<CompareData['files']>[number]

export interface CompareResult {
  /** The base as a full SHA (resolves a tag or branch given as the previous version). */
  baseSha?: string
  status: string
  /** total_commits: exact, whatever was read; unknown unless a non-negative safe integer. */
  totalCommits?: number
  /** The newest MAX_COMMITS commits read, oldest first. */
  commits: ShippedCommit[]
  /** The start of every commit message read, oldest first, for pull requests. */
  messages: string[]
  files?: ChangedPath[]
  filesComplete: boolean
  /** Why a later page was not read (the first page's facts stand). */
  failure?: ApiFailure
}

interface PageCommits {
  page: number
  commits: ShippedCommit[]
  messages: string[]
}

export interface CompareQuery {
  owner: string
  repo: string
  base: string
  head: string
}

/** Throws ApiError when the first page fails; a later page's failure is in the result. */
export async function compareCommits(
  client: GitHubClient,
  query: CompareQuery
): Promise<CompareResult> {
  const first = await client.call(octokit =>
    octokit.rest.repos.compareCommitsWithBasehead({
      owner: query.owner,
      repo: query.repo,
      basehead: `${query.base}...${query.head}`,
      per_page: COMPARE_PAGE_SIZE
    })
  )
  const call = client.pathCallName(
    `repos/${query.owner}/${query.repo}/compare/${encodeURIComponent(query.base)}...${encodeURIComponent(query.head)}`
  )
  const status = textOf(first.data?.status)
  const firstCommits = listOf(first.data?.commits)
  if (!status || !firstCommits) {
    throw new ApiError({ type: 'shape', call, what: 'no status or commits' })
  }
  const pages: PageCommits[] = [{ page: 1, ...readCommits(firstCommits) }]
  const failure = await readLaterPages(client, first.link, call, pages)

  pages.sort((a, b) => a.page - b.page)
  const commits = pages.flatMap(page => page.commits)
  const files = listOf(first.data?.files)
  const baseSha = first.data?.base_commit?.sha
  const totalCommits = countOf(first.data?.total_commits)
  return {
    ...(isFullSha(baseSha) ? { baseSha: baseSha.toLowerCase() } : {}),
    status,
    ...(totalCommits !== undefined ? { totalCommits } : {}),
    commits: commits.slice(-MAX_COMMITS),
    messages: pages.flatMap(page => page.messages),
    ...(files ? { files: changedPaths(files) } : {}),
    filesComplete: files !== undefined && files.length < MAX_COMPARE_FILES,
    ...(failure ? { failure } : {})
  }
}

/**
 * Later pages, newest first, while calls and commits to keep remain; each read page is added to
 * `pages`. Returns why reading stopped early, when that is worth a warning.
 */
async function readLaterPages(
  client: GitHubClient,
  firstLink: string | undefined,
  call: string,
  pages: PageCommits[]
): Promise<ApiFailure | undefined> {
  let link = firstLink
  let relation = 'last'
  let kept = 0
  while (kept < MAX_COMMITS && client.remainingCalls > 0 && !client.timedOut) {
    if (link !== undefined && link.length > MAX_LINK_HEADER_CHARS) {
      return {
        type: 'refused',
        call,
        reason: `its Link header is longer than ${MAX_LINK_HEADER_CHARS} characters, so no later page was read`
      }
    }
    const next = linkTarget(link, relation)
    if (!next) return undefined
    const page = pageNumber(next)
    if (page === undefined || page <= 1 || pages.some(read => read.page === page)) return undefined
    // A link elsewhere is not followed: the token stays with the API.
    if (!client.isBelowRoot(next)) return undefined
    let answer
    try {
      answer = await client.getUrl(next)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      return error.failure.type === 'call-limit' ? undefined : error.failure
    }
    const commits = listOf(untrusted<CompareData>(answer.data)?.commits)
    if (!commits)
      return { type: 'shape', call: client.callName(next), what: `page ${page} has no commits` }
    const read = readCommits(commits)
    pages.push({ page, ...read })
    kept += read.commits.length
    link = answer.link
    relation = 'prev'
  }
  return undefined
}

function readCommits(items: Untrusted<CompareCommit>[]): {
  commits: ShippedCommit[]
  messages: string[]
} {
  const commits: ShippedCommit[] = []
  const messages: string[] = []
  for (const item of items) {
    const sha = item?.sha
    if (!isFullSha(sha)) continue
    const message = (textOf(item?.commit?.message) ?? '').slice(0, MAX_MESSAGE_READ_CHARS)
    const firstLine = collapseWhitespace(message.split(/\r\n|\r|\n/, 1)[0] ?? '')
    const author = textOf(item?.author?.login) ?? textOf(item?.commit?.author?.name)
    const committedAt = timestampOf(item?.commit?.committer?.date)
    commits.push({
      sha: sha.toLowerCase(),
      message: firstLine.slice(0, MAX_COMMIT_MESSAGE_CHARS),
      ...(author ? { author: collapseWhitespace(author) } : {}),
      ...(committedAt ? { committedAt } : {})
    })
    messages.push(message)
  }
  return { commits, messages }
}

/** Each changed file once; a rename is one entry that names both paths. */
function changedPaths(files: Untrusted<ComparedFile>[]): ChangedPath[] {
  const paths: ChangedPath[] = []
  for (const file of files) {
    const path = textOf(file?.filename)
    if (!path) continue
    const previousPath = textOf(file?.previous_filename)
    paths.push(previousPath && previousPath !== path ? { path, previousPath } : { path })
  }
  return paths
}

/** The URL of a Link header's relation ('next', 'last', 'prev'), when there is one. */
export function linkTarget(link: string | undefined, relation: string): URL | undefined {
  if (!link || link.length > MAX_LINK_HEADER_CHARS) return undefined
  for (const part of link.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part)
    if (!match) continue
    const rels = /\brel="?([^";]*)"?/.exec(match[2])?.[1]?.split(/\s+/) ?? []
    if (!rels.includes(relation)) continue
    try {
      return new URL(match[1])
    } catch {
      return undefined
    }
  }
  return undefined
}

function pageNumber(url: URL): number | undefined {
  const page = Number(url.searchParams.get('page'))
  return Number.isSafeInteger(page) && page > 0 ? page : undefined
}

/** Whether the answer's status says the head is older than the base: a rollback. */
export function isRollback(result: CompareResult): boolean {
  return result.status === 'behind'
}

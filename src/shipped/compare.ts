/**
 * GET /repos/{owner}/{repo}/compare/{base}...{head}: the commits between the previous deploy and
 * the version, their exact count, the status (`behind` is a rollback) and the changed files.
 * GitHub lists commits oldest first, at most COMPARE_PAGE_SIZE a page; the first page also holds
 * the files. Later pages are read newest first (the Link header's "last", then "prev"), only while
 * calls are left, so that the commits kept are the newest ones read.
 */
import { collapseWhitespace } from '../text.ts'
import { ApiError, type GitHubApi } from './github-api.ts'
import { arrayAt, integerAt, isFullSha, stringAt } from './json-shape.ts'
import type { ShippedCommit } from './types.ts'

/** GitHub's largest compare page. */
export const COMPARE_PAGE_SIZE = 250
/** Commits listed; the count is always given in full. Keeps custom_metadata small. */
export const MAX_COMMITS = 50
/** GitHub cuts a compare's file list at this many files. */
export const MAX_COMPARE_FILES = 300
/** A commit's first line longer than this is cut: enough for any real title. */
export const MAX_COMMIT_MESSAGE_CHARS = 200
/** Only the start of a message is kept for finding its pull request (title and first body line). */
const MAX_MESSAGE_READ_CHARS = 2000

export interface CompareResult {
  /** The base as a full SHA (resolves a tag or branch given as the previous version). */
  baseSha?: string
  status: string
  /** total_commits: exact, whatever was read. */
  totalCommits?: number
  /** The newest MAX_COMMITS commits read, oldest first. */
  commits: ShippedCommit[]
  /** The start of every commit message read, oldest first, for pull requests. */
  messages: string[]
  /** Whether every commit of the range was read. */
  allCommitsRead: boolean
  files?: string[]
  filesComplete: boolean
}

interface PageCommits {
  page: number
  commits: ShippedCommit[]
  messages: string[]
}

export async function compareCommits(
  api: GitHubApi,
  repositoryPath: string,
  base: string,
  head: string
): Promise<CompareResult> {
  const path = `${repositoryPath}/compare/${encodeURIComponent(base)}...${encodeURIComponent(head)}`
  const first = await api.get(path, { per_page: COMPARE_PAGE_SIZE })
  const call = api.callName(api.url(path))
  const status = stringAt(first.body, 'status')
  const firstCommits = arrayAt(first.body, 'commits')
  if (!status || !firstCommits) {
    throw new ApiError({ type: 'shape', call, what: 'no status or commits' })
  }
  const totalCommits = integerAt(first.body, 'total_commits')
  const pages: PageCommits[] = [{ page: 1, ...readCommits(firstCommits) }]

  // Later pages, newest first, while calls and commits to keep remain.
  let next = linkTarget(first.link, 'last')
  let kept = 0
  while (next && kept < MAX_COMMITS && api.remainingCalls > 0 && !api.timedOut) {
    const page = pageNumber(next)
    if (page === undefined || page <= 1 || pages.some(read => read.page === page)) break
    if (!api.isBelowRoot(next)) break
    let answer
    try {
      answer = await api.getUrl(next)
    } catch (error) {
      // The first page is enough for the count, the files and the link: later pages are extras.
      if (error instanceof ApiError && error.failure.type === 'call-limit') break
      throw error
    }
    const commits = arrayAt(answer.body, 'commits')
    if (!commits) throw new ApiError({ type: 'shape', call, what: `page ${page} has no commits` })
    const read = readCommits(commits)
    pages.push({ page, ...read })
    kept += read.commits.length
    next = linkTarget(answer.link, 'prev')
  }

  pages.sort((a, b) => a.page - b.page)
  const commits = pages.flatMap(page => page.commits)
  const files = arrayAt(first.body, 'files')
  const fileNames = files?.flatMap(file =>
    [stringAt(file, 'filename'), stringAt(file, 'previous_filename')].filter(
      (name): name is string => name !== undefined
    )
  )
  const baseSha = stringAt(first.body, 'base_commit', 'sha')
  return {
    ...(isFullSha(baseSha) ? { baseSha: baseSha.toLowerCase() } : {}),
    status,
    ...(totalCommits !== undefined ? { totalCommits } : {}),
    commits: commits.slice(-MAX_COMMITS),
    messages: pages.flatMap(page => page.messages),
    allCommitsRead: totalCommits !== undefined && commits.length >= totalCommits,
    ...(fileNames ? { files: fileNames } : {}),
    filesComplete: files !== undefined && files.length < MAX_COMPARE_FILES
  }
}

function readCommits(items: unknown[]): { commits: ShippedCommit[]; messages: string[] } {
  const commits: ShippedCommit[] = []
  const messages: string[] = []
  for (const item of items) {
    const sha = stringAt(item, 'sha')
    if (!isFullSha(sha)) continue
    const message = (stringAt(item, 'commit', 'message') ?? '').slice(0, MAX_MESSAGE_READ_CHARS)
    const firstLine = collapseWhitespace(message.split(/\r\n|\r|\n/, 1)[0] ?? '')
    const author = stringAt(item, 'author', 'login') ?? stringAt(item, 'commit', 'author', 'name')
    commits.push({
      sha: sha.toLowerCase(),
      message: firstLine.slice(0, MAX_COMMIT_MESSAGE_CHARS),
      ...(author ? { author: collapseWhitespace(author) } : {})
    })
    messages.push(message)
  }
  return { commits, messages }
}

/** The URL of a Link header's relation ('next', 'last', 'prev'), when there is one. */
export function linkTarget(link: string | undefined, relation: string): URL | undefined {
  if (!link) return undefined
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

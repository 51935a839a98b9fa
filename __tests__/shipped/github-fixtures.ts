/**
 * Realistic GitHub REST answers for the lookup's tests, made from a small description of a
 * repository's history (commits in order), the way GitHub shapes them.
 */
import { createHash } from 'node:crypto'

export const TOKEN = 'ghs_T0kenThatMustNeverShow1234567890ab'
export const REPOSITORY = 'acme/shop'

/** A deterministic full SHA for a name. */
export function sha(name: string): string {
  return createHash('sha1').update(name).digest('hex')
}

export interface FakeCommit {
  sha: string
  message: string
  login?: string
  name: string
  /** The committer's date; default 2026-01-01T00:00:00Z. */
  committedAt?: string
}

/** `count` commits; every 5th is a squash merge "Change i (#100+i)". */
export function history(count: number, prefix = 'c'): FakeCommit[] {
  return Array.from({ length: count }, (_, i) => ({
    sha: sha(`${prefix}${i}`),
    message: i % 5 === 0 ? `Change ${i} (#${100 + i})\n\nbody` : `Commit ${i}\n\ndetails`,
    login: i % 2 === 0 ? `dev${i}` : undefined,
    name: `Dev ${i}`
  }))
}

/** A commit as GitHub's compare lists it. */
export function commitJson(commit: FakeCommit): Record<string, unknown> {
  return {
    sha: commit.sha,
    node_id: 'C_x',
    commit: {
      author: { name: commit.name, email: 'dev@example.com', date: '2026-01-01T00:00:00Z' },
      committer: {
        name: commit.name,
        email: 'dev@example.com',
        date: commit.committedAt ?? '2026-01-01T00:00:00Z'
      },
      message: commit.message
    },
    author: commit.login ? { login: commit.login, id: 1 } : null,
    parents: []
  }
}

export interface CompareOptions {
  base: string
  head: string
  commits: FakeCommit[]
  status?: string
  page?: number
  perPage?: number
  /** A file name, or a rename from previous_filename. */
  files?: (string | { filename: string; previous_filename: string })[]
  /** For Link headers: the page URL without the page number. */
  pageUrl?: string
}

/** One page of GET /compare, and its Link header. */
export function comparePage(options: CompareOptions): {
  body: Record<string, unknown>
  headers: Record<string, string>
} {
  const perPage = options.perPage ?? 250
  const page = options.page ?? 1
  const pages = Math.max(1, Math.ceil(options.commits.length / perPage))
  const slice = options.commits.slice((page - 1) * perPage, page * perPage)
  const status = options.status ?? (options.commits.length > 0 ? 'ahead' : 'identical')
  const body: Record<string, unknown> = {
    url: 'ignored',
    html_url: 'https://evil.example/not-used',
    status,
    ahead_by: status === 'behind' ? 0 : options.commits.length,
    behind_by: status === 'behind' ? 3 : 0,
    total_commits: options.commits.length,
    base_commit: { sha: options.base, commit: { message: 'base' } },
    merge_base_commit: { sha: options.base },
    commits: slice.map(commitJson)
  }
  if (page === 1) {
    body.files = (options.files ?? ['src/a.ts']).map(file =>
      typeof file === 'string'
        ? { filename: file, status: 'modified' }
        : { ...file, status: 'renamed' }
    )
  }
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' }
  if (pages > 1 && options.pageUrl) {
    const link = (n: number, rel: string): string => `<${options.pageUrl}&page=${n}>; rel="${rel}"`
    const rels: string[] = []
    if (page > 1) rels.push(link(page - 1, 'prev'))
    if (page < pages) rels.push(link(page + 1, 'next'))
    if (page < pages) rels.push(link(pages, 'last'))
    if (page > 1) rels.push(link(1, 'first'))
    headers.Link = rels.join(', ')
  }
  return { body, headers }
}

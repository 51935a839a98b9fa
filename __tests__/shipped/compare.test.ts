/**
 * The range since the previous deploy: one reading of a commit, and the compare read by page
 * number (the exact count, the newest commits, the files, a rollback), where a later page that
 * fails keeps what the first page said.
 */
import { describe, expect, it } from '@jest/globals'
import { GitHubFaults } from '../../emulator/github.ts'
import { compareSince, MAX_COMMITS, readCommits } from '../../src/shipped/compare.ts'
import type { PreviousDeploy } from '../../src/shipped/previous-deploy.ts'
import { history, queryFor, sha, useFakeGitHub, withGitHub } from './fake-github.ts'

const fake = useFakeGitHub(() => ({ commits: history(601), refs: { 'v1.0.0': sha(2) } }))

const shas = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => sha(from + i))

async function compare(version: number, previous: PreviousDeploy, options = {}) {
  return withGitHub(
    fake(),
    async github => ({
      ...(await compareSince(github, queryFor(fake(), { version: sha(version) }), previous)),
      calls: github.calls()
    }),
    options
  )
}

const from = (n: number): PreviousDeploy => ({ ref: sha(n), sha: sha(n), source: 'input' })
const pagesAsked = (): (string | null)[] =>
  fake().requests.map(request => new URL(request.path, 'https://x').searchParams.get('page'))

describe('readCommits', () => {
  it('keeps the first line, the login or else the name, and a commit time only when it is a date', () => {
    const read = readCommits([
      {
        sha: sha(1).toUpperCase(),
        message: `  Add   login (#41)\r\n\r\nbody`,
        authors: ['alice', 'Alice A'],
        committedAt: '2026-02-01T10:00:00+02:00'
      },
      { sha: sha(2), message: 'x'.repeat(300), authors: [null, ' Bob \n B '], committedAt: 'soon' },
      { sha: sha(3), message: 7, authors: [], committedAt: 1772359140 },
      { sha: 'not-a-sha', message: 'skipped', authors: [], committedAt: undefined }
    ])
    expect(read.commits).toEqual([
      {
        sha: sha(1),
        message: 'Add login (#41)',
        author: 'alice',
        committedAt: '2026-02-01T10:00:00+02:00'
      },
      { sha: sha(2), message: 'x'.repeat(200), author: 'Bob B' },
      { sha: sha(3), message: '' }
    ])
    expect(read.messages).toEqual([`  Add   login (#41)\r\n\r\nbody`, 'x'.repeat(300), ''])
  })

  it(`keeps the newest ${MAX_COMMITS} commits, and every message for the pull requests`, () => {
    const items = shas(1, 60).map(sha => ({ sha, message: sha, authors: [], committedAt: '' }))
    const read = readCommits(items)
    expect(read.commits.map(commit => commit.sha)).toEqual(shas(11, 60))
    expect(read.messages).toHaveLength(60)
  })
})

describe('the compare', () => {
  it('counts 600 commits exactly, and reads the last page by number for the newest ones', async () => {
    const { range, calls } = await compare(601, from(1))
    expect(range?.commitCount).toBe(600)
    expect(range?.commits.map(commit => commit.sha)).toEqual(shas(552, 601))
    // Page 3 holds the newest 100: page 2 is not needed.
    expect(pagesAsked()).toEqual(['1', '3'])
    expect(fake().requests.every(request => /[?&]per_page=250(&|$)/.test(request.path))).toBe(true)
    expect(calls).toBe(2)
    expect(range?.changedFiles).toHaveLength(300)
    expect(range?.changedFilesComplete).toBe(false)
  })

  it('reads the pages before the last, newest first, while it has too few commits', async () => {
    const { range } = await compare(511, from(1))
    expect(pagesAsked()).toEqual(['1', '3', '2'])
    expect(range?.commits.map(commit => commit.sha)).toEqual(shas(462, 511))
    // Every page read gives its messages: all 510 commits were read.
    expect(range?.messages).toHaveLength(510)
  })

  it('reads no later page when no call is left', async () => {
    const { range, failure } = await compare(601, from(1), { maxCalls: 1 })
    expect(pagesAsked()).toEqual(['1'])
    expect(range?.commitCount).toBe(600)
    expect(failure).toBeUndefined()
  })

  it('keeps the count, the files and the commits of page 1 when a later page fails', async () => {
    fake().inject('GET /repos/*/*/compare/*?page=3', GitHubFaults.badGateway, Infinity)
    const { range, failure } = await compare(601, from(1))
    expect(range?.commitCount).toBe(600)
    expect(range?.changedFiles).toHaveLength(300)
    expect(range?.commits.map(commit => commit.sha)).toEqual(shas(202, 251))
    expect(failure?.message).toMatch(
      /^GET \/repos\/octo-org\/octo-repo\/compare\/\S+ answered HTTP 502/
    )
  })

  it('says a rollback when the version is behind the previous deploy', async () => {
    const { range } = await compare(3, from(9))
    expect(range).toMatchObject({ rollback: true, commitCount: 0, commits: [] })
  })

  it('resolves a tag to the SHA it names', async () => {
    const { previous, range } = await compare(6, { ref: 'v1.0.0', source: 'release' })
    expect(previous).toEqual({ ref: 'v1.0.0', sha: sha(2), source: 'release' })
    expect(range?.commitCount).toBe(4)
  })

  it('lists each changed file once, a rename with both of its paths', async () => {
    fake().repository.commits = [
      ...history(2),
      {
        sha: sha(3),
        message: 'Move',
        author: { name: 'A' },
        files: [{ filename: 'src/new.ts', status: 'renamed', previous_filename: 'src/old.ts' }]
      },
      { sha: sha(4), message: 'Edit', author: { name: 'A' }, files: [{ filename: 'src/new.ts' }] }
    ]
    const { range } = await compare(4, from(2))
    expect(range?.changedFiles).toEqual([{ path: 'src/new.ts', previousPath: 'src/old.ts' }])
    expect(range?.changedFilesComplete).toBe(true)
  })

  it('makes no call when the previous deploy is this very commit', async () => {
    const { range, calls } = await compare(7, { ...from(7), ref: sha(7).toUpperCase() })
    expect(range).toMatchObject({ commitCount: 0, changedFiles: [], changedFilesComplete: true })
    expect(calls).toBe(0)
  })

  it('gives no range, and the failure, when the first page fails', async () => {
    fake().inject('GET /repos/*/*/compare/*', GitHubFaults.notFound)
    const { previous, range, failure } = await compare(7, from(2))
    expect(previous).toEqual(from(2))
    expect(range).toBeUndefined()
    expect(failure?.message).toContain('answered HTTP 404 ("Not Found"): a commit of the range')
  })
})

/**
 * The range since the previous deploy: one reading of a commit, and the compare read by page
 * number (the exact count, every commit, the files, a rollback), newest pages first when calls run
 * short, where a later page that fails keeps what the first page said.
 */
import { describe, expect, it } from '@jest/globals'
import { GitHubFaults } from '../../emulator/github.ts'
import { compareSince, readCommits } from '../../src/shipped/compare.ts'
import type { PreviousDeploy } from '../../src/shipped/types.ts'
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
    expect(read.messagesComplete).toBeUndefined()
  })

  it('keeps every commit, and its message up to 2,000 characters, saying the longer ones were cut', () => {
    const items = shas(1, 600).map(sha => ({
      sha,
      message: `Fix ${sha}\n\n${'x'.repeat(3000)}`,
      authors: [],
      committedAt: ''
    }))
    const read = readCommits(items)
    expect(read.commits.map(commit => commit.sha)).toEqual(shas(1, 600))
    expect(read.messages.map(message => message.length)).toEqual(Array(600).fill(2000))
    expect(read.messagesComplete).toBe(false)
  })

  it('reads a message of exactly 2,000 characters whole, and never cuts a character in half', () => {
    const whole = 'Fit the page\n\n'.padEnd(2000, 'y')
    const emoji = `${'Party\n\n'.padEnd(1999, 'y')}\u{1f389} and more`
    const item = (n: number, message: string) => ({
      sha: sha(n),
      message,
      authors: [],
      committedAt: ''
    })
    expect(readCommits([item(1, whole)])).toMatchObject({ messages: [whole] })
    expect(readCommits([item(1, whole)]).messagesComplete).toBeUndefined()
    const cut = readCommits([item(1, whole), item(2, emoji)])
    expect(cut.messages).toEqual([whole, emoji.slice(0, 1999)])
    expect(cut.messagesComplete).toBe(false)
  })
})

describe('the compare', () => {
  it('reads every page of 600 commits by number, the newest first', async () => {
    const { range, calls } = await compare(601, from(1))
    expect(range?.commitCount).toBe(600)
    expect(range?.commits.map(commit => commit.sha)).toEqual(shas(2, 601))
    expect(range?.messages).toHaveLength(600)
    expect(range?.pullRequestsComplete).toBe(true)
    expect(pagesAsked()).toEqual(['1', '3', '2'])
    expect(fake().requests.every(request => /[?&]per_page=250(&|$)/.test(request.path))).toBe(true)
    expect(calls).toBe(3)
    expect(range?.changedFiles).toHaveLength(300)
    expect(range?.changedFilesComplete).toBe(false)
  })

  it('reads the newest pages while calls are left, and says commits were left unread', async () => {
    const { range, failure } = await compare(601, from(1), { maxCalls: 2 })
    expect(pagesAsked()).toEqual(['1', '3'])
    expect(range?.commitCount).toBe(600)
    expect(range?.commits.map(commit => commit.sha)).toEqual([...shas(2, 251), ...shas(502, 601)])
    expect(range?.pullRequestsComplete).toBe(false)
    expect(failure).toBeUndefined()
  })

  it('keeps the count, the files and the commits of page 1 when a later page fails', async () => {
    fake().inject('GET /repos/*/*/compare/*?page=3', GitHubFaults.badGateway, Infinity)
    const { range, failure } = await compare(601, from(1))
    expect(pagesAsked()).toEqual(['1', '3'])
    expect(range?.commitCount).toBe(600)
    expect(range?.changedFiles).toHaveLength(300)
    expect(range?.commits.map(commit => commit.sha)).toEqual(shas(2, 251))
    expect(range?.pullRequestsComplete).toBe(false)
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
    expect(range).toMatchObject({ commitCount: 0, changedFiles: [], pullRequestsComplete: true })
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

/** The compare: the count, the newest commits across pages, the files, a rollback. */
import { describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { MAX_COMMITS } from '../../src/shipped/compare.ts'
import { MAX_API_CALLS } from '../../src/shipped/github-client.ts'
import { lookUpShipped } from '../../src/shipped/lookup.ts'
import { history, sha, type FakeCommit } from './github-fixtures.ts'
import {
  API,
  lookupOptions,
  mockCompare,
  mockRuns,
  PREVIOUS,
  REPO,
  useNock,
  VERSION
} from './github-nock.ts'

const { unmatched } = useNock()

describe('the compare', () => {
  it('counts a 600-commit range exactly, keeps the newest commits, and stays within the call limit', async () => {
    const commits = history(600)
    mockRuns([{ id: 4998, sha: PREVIOUS }])
    mockCompare(PREVIOUS, commits)
    const { shipped, warning } = await lookUpShipped(lookupOptions())
    expect(warning).toBeUndefined()
    expect(shipped.commitCount).toBe(600)
    expect(shipped.commits).toHaveLength(MAX_COMMITS)
    expect(shipped.commits.map(commit => commit.sha)).toEqual(
      commits.slice(-MAX_COMMITS).map(commit => commit.sha)
    )
    // Pages 1 (count, files) and 3 (the newest 100): 2 + 2 calls, no need for page 2.
    expect(shipped.apiCalls).toBe(4)
    expect(shipped.apiCalls).toBeLessThanOrEqual(MAX_API_CALLS)
  })

  it('follows Link from the last page back while it has too few commits', async () => {
    const commits = history(510)
    mockRuns([{ id: 4998, sha: PREVIOUS }])
    mockCompare(PREVIOUS, commits)
    const { shipped } = await lookUpShipped(lookupOptions())
    expect(shipped.commitCount).toBe(510)
    // The last page holds 10: page 2 gives the other 40 of the newest 50.
    expect(shipped.commits.map(commit => commit.sha)).toEqual(
      commits.slice(-MAX_COMMITS).map(commit => commit.sha)
    )
    expect(shipped.apiCalls).toBe(5)
    // Every page read counts its pull requests: 50 on page 1, 50 on page 2, 2 on page 3.
    expect(shipped.pullRequestCount).toBe(102)
  })

  it('says a rollback when the version is behind the previous deploy', async () => {
    mockCompare(PREVIOUS, [], { status: 'behind' })
    const { shipped } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(shipped).toMatchObject({ rollback: true, commitCount: 0, previousSha: PREVIOUS })
  })

  it('gives the changed files, and says when GitHub cut them at 300', async () => {
    mockCompare(PREVIOUS, history(2), { files: ['a.ts', 'b.ts'] })
    const small = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(small.shipped).toMatchObject({
      changedFiles: [{ path: 'a.ts' }, { path: 'b.ts' }],
      changedFilesComplete: true
    })

    nock.cleanAll()
    const many = Array.from({ length: 300 }, (_, i) => `f${i}.ts`)
    mockCompare(PREVIOUS, history(2), { files: many })
    const cut = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(cut.shipped.changedFiles).toHaveLength(300)
    expect(cut.shipped.changedFilesComplete).toBe(false)
  })

  it('makes no compare call when the previous deploy is this version', async () => {
    const { shipped } = await lookUpShipped(
      lookupOptions({ previousVersion: VERSION.toUpperCase() })
    )
    expect(shipped).toMatchObject({ commitCount: 0, apiCalls: 0, changedFiles: [] })
    expect(unmatched()).toEqual([])
  })
})

describe('what an answer may not make the lookup believe', () => {
  it.each([[-1], [1.5], [2 ** 53], ['600'], [1e300], [null]])(
    'treats a total_commits of %p as unknown',
    async totalCommits => {
      mockCompare(PREVIOUS, history(2), {
        firstPage: body => {
          body.total_commits = totalCommits
        }
      })
      const { shipped } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
      expect(shipped.commitCount).toBeUndefined()
      expect(shipped.commits).toHaveLength(2)
    }
  )

  it.each([
    ['an encoded slash', '..%2f..%2fother'],
    ['an encoded slash in upper case', '..%2F..%2Fother'],
    ['encoded dots', '%2e%2e/%2e%2e/other']
  ])('never requests a Link whose path climbs out of the API root by %s', async (_, climb) => {
    const root = 'https://ghes.example.com/api/v3'
    mockCompare(PREVIOUS, history(600), {
      root: `${root}/`,
      link: `<${root}/${climb}?page=3>; rel="last"`
    })
    const elsewhere = nock('https://ghes.example.com').get(/other/).query(true).reply(200, {})
    const { shipped, warning } = await lookUpShipped(
      lookupOptions({ apiUrl: root, previousVersion: PREVIOUS })
    )
    expect(elsewhere.isDone()).toBe(false)
    expect(unmatched()).toEqual([])
    expect(shipped).toMatchObject({ commitCount: 600, apiCalls: 1 })
    expect(warning).toBeUndefined()
  })

  it('names an over-long Link header as refused, and keeps the first page', async () => {
    const target = `${API}${REPO}/compare/${PREVIOUS}...${VERSION}?per_page=250&page=3`
    const padding = `<${API}/x>; rel="other", `.repeat(200)
    mockCompare(PREVIOUS, history(600), { link: `${padding}<${target}>; rel="last"` })
    const { shipped, warning } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(shipped).toMatchObject({ commitCount: 600, apiCalls: 1 })
    expect(warning).toContain(
      `GET /repos/acme/shop/compare/${PREVIOUS}...${VERSION} was refused before it was sent: its Link header is longer than 8192 characters`
    )
    expect(warning).not.toContain('could not be reached')
  })
})

describe('the changed files', () => {
  it('counts a renamed file once, naming both of its paths', async () => {
    mockCompare(PREVIOUS, history(2), {
      files: [{ filename: 'src/new.ts', previous_filename: 'src/old.ts' }, 'b.ts']
    })
    const { shipped } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(shipped.changedFiles).toEqual([
      { path: 'src/new.ts', previousPath: 'src/old.ts' },
      { path: 'b.ts' }
    ])
    expect(shipped.changedFilesComplete).toBe(true)
  })
})

describe('commit times', () => {
  it("gives each commit its committer's date, only when it is a valid timestamp", async () => {
    const commits: FakeCommit[] = [
      { sha: sha('t1'), message: 'one', name: 'A', committedAt: '2026-02-01T10:00:00Z' },
      { sha: sha('t2'), message: 'two', name: 'B', committedAt: 'yesterday' },
      { sha: sha('t3'), message: 'three', name: 'C', committedAt: '2026-13-01T00:00:00Z' },
      { sha: sha('t4'), message: 'four', name: 'D', committedAt: '2026-02-01T12:00:00+02:00' }
    ]
    mockCompare(PREVIOUS, commits)
    const { shipped } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(shipped.commits.map(commit => commit.committedAt)).toEqual([
      '2026-02-01T10:00:00Z',
      undefined,
      undefined,
      '2026-02-01T12:00:00+02:00'
    ])
  })
})

describe('a later page that fails', () => {
  it('keeps the exact count, the complete file list and the commits read, with one warning', async () => {
    const files = ['a.ts', 'b.ts', 'c.ts']
    mockCompare(PREVIOUS, history(600), { files, failingPages: { 3: 502 } })
    const { shipped, warning } = await lookUpShipped(lookupOptions({ previousVersion: PREVIOUS }))
    expect(shipped.commitCount).toBe(600)
    expect(shipped.changedFiles).toEqual(files.map(path => ({ path })))
    expect(shipped.changedFilesComplete).toBe(true)
    // Only page 1 was read: its newest commits are kept.
    expect(shipped.commits.map(commit => commit.sha)).toEqual(
      history(600)
        .slice(250 - MAX_COMMITS, 250)
        .map(commit => commit.sha)
    )
    expect(shipped.apiCalls).toBe(2)
    expect(warning).toContain(
      `GET /repos/acme/shop/compare/${PREVIOUS}...${VERSION} answered HTTP 502`
    )
    expect(warning).toMatch(/recorded with what was found\.$/)
  })
})

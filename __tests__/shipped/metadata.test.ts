/** The fields a lookup adds to the change's custom_metadata, within their size bound. */
import { describe, expect, it } from '@jest/globals'
import {
  MAX_COMMITS,
  MAX_SHIPPED_METADATA_BYTES,
  shippedMetadata
} from '../../src/shipped/metadata.ts'
import { emptyShipped, type Shipped } from '../../src/shipped/types.ts'
import { sha } from './fake-github.ts'

const PREVIOUS = sha(9)

/** A range read whole, unless said otherwise. */
function shipped(overrides: Partial<Shipped>): Shipped {
  const known = { previousSha: PREVIOUS, source: 'deployment' as const, pullRequestsComplete: true }
  return { ...emptyShipped(), ...known, ...overrides }
}

const commit = (n: number) => ({ sha: sha(n), message: `Commit ${n}`, committedAt: '' })

const pulls = [{ number: 41, title: 'Add login', url: 'https://github.com/acme/shop/pull/41' }]

describe('shippedMetadata', () => {
  it('gives the fields that are known, rollback only when true, and no commit times or files', () => {
    const fields = shippedMetadata(
      shipped({
        compareUrl: 'https://github.com/acme/shop/compare/a...b',
        commitCount: 2,
        commits: [
          { sha: sha(1), message: 'one', author: 'alice', committedAt: '2026-03-01T09:00:00Z' }
        ],
        changedFiles: [{ path: 'src/new.ts', previousPath: 'src/old.ts' }],
        pullRequests: pulls.slice(0, 1),
        pullRequestCount: 1,
        runStartedAt: '2026-03-01T10:00:05Z'
      })
    )
    expect(fields).toEqual({
      previous_sha: PREVIOUS,
      compare_url: 'https://github.com/acme/shop/compare/a...b',
      commit_count: 2,
      commits: [{ sha: sha(1), message: 'one', author: 'alice' }],
      pull_requests: [pulls[0]],
      run_started_at: '2026-03-01T10:00:05Z'
    })
    expect(shippedMetadata(shipped({ rollback: true }))).toMatchObject({ rollback: true })
  })

  it('says where it was read, and that the commit before a push is no previous deploy', () => {
    const pushed = shipped({ readFrom: 'git', source: 'previous-push', commitCount: 0 })
    expect(shippedMetadata(pushed)).toEqual({
      source: 'git',
      previous_push_sha: PREVIOUS,
      commit_count: 0
    })
  })

  it('says the commits are incomplete when only some are listed and their count is unknown', () => {
    const head = shipped({
      previousSha: undefined,
      commits: [commit(1)],
      pullRequestsComplete: false
    })
    expect(shippedMetadata(head)).toEqual({
      commits_complete: false,
      commits: [{ sha: sha(1), message: 'Commit 1' }],
      pull_requests_complete: false
    })
    expect(shippedMetadata(shipped({ commitCount: 1, commits: [commit(1)] }))).not.toHaveProperty(
      'commits_complete'
    )
  })

  it(`lists the newest ${MAX_COMMITS} of every commit read`, () => {
    const commits = Array.from({ length: 300 }, (_, i) => commit(i + 1))
    const fields = shippedMetadata(shipped({ commitCount: 300, commits }))
    expect(fields.commits).toEqual(
      commits.slice(-MAX_COMMITS).map(({ sha, message }) => ({ sha, message }))
    )
    expect(fields.commit_count).toBe(300)
  })

  it('says the pull request count is not exact when commits were left unread', () => {
    const partial = {
      commitCount: 3000,
      commits: [commit(1)],
      pullRequests: pulls,
      pullRequestCount: 40
    }
    expect(shippedMetadata(shipped({ ...partial, pullRequestsComplete: false }))).toMatchObject({
      pull_request_count: 40,
      pull_requests_complete: false
    })
    expect(shippedMetadata(shipped(partial))).not.toHaveProperty('pull_requests_complete')
    // Nothing was read: nothing is claimed, complete or not.
    expect(shippedMetadata(shipped({ pullRequestsComplete: false }))).not.toHaveProperty(
      'pull_requests_complete'
    )
  })

  it(`stays under ${MAX_SHIPPED_METADATA_BYTES} bytes, keeping the newest entries and exact counts`, () => {
    // 200 characters of 4-byte emoji: 800 bytes a message.
    const message = '😀'.repeat(100)
    const commits = Array.from({ length: 50 }, (_, i) => ({
      sha: sha(100 + i),
      message,
      author: 'a'
    }))
    const pullRequests = Array.from({ length: 20 }, (_, i) => ({
      number: i + 1,
      title: message,
      url: `https://github.com/acme/shop/pull/${i + 1}`
    }))
    const fields = shippedMetadata(
      shipped({ commitCount: 600, commits, pullRequests, pullRequestCount: 70 })
    )
    expect(Buffer.byteLength(JSON.stringify(fields))).toBeLessThanOrEqual(
      MAX_SHIPPED_METADATA_BYTES
    )
    const kept = fields.commits as { sha: string }[]
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.length).toBeLessThan(50)
    expect(kept.at(-1)?.sha).toBe(sha(149))
    expect(fields.commit_count).toBe(600)
    expect(fields.pull_request_count).toBe(70)
  })
})

describe('shippedMetadata with triage', () => {
  const triage = {
    issues: ['ENG-142'],
    closes: ['#88'],
    risk: { migration: ['db/1.sql'] },
    riskComplete: false
  }

  it('adds the issues, closed issues and risk, and says whether the risk is complete', () => {
    expect(shippedMetadata(shipped({}), triage)).toMatchObject({
      issues: ['ENG-142'],
      closes: ['#88'],
      risk: { migration: ['db/1.sql'] },
      risk_complete: false
    })
    // No lookup: only what triage found (the branch, the remediates input).
    expect(
      shippedMetadata(undefined, { riskComplete: false, issues: ['ENG-1'], issuesComplete: false })
    ).toEqual({
      issues: ['ENG-1'],
      issues_complete: false,
      risk_complete: false
    })
  })

  it('says why the risk is unknown when no changed path could be read, and only then', () => {
    const unknown = { riskComplete: false, riskUnknown: 'no checkout' as const }
    expect(shippedMetadata(emptyShipped(), unknown)).toMatchObject({
      risk_complete: false,
      risk_unknown: 'no checkout'
    })
    expect(shippedMetadata(shipped({}), triage)).not.toHaveProperty('risk_unknown')
  })

  it(`stays under ${MAX_SHIPPED_METADATA_BYTES} bytes with the lists of triage, naming every category and keeping the counts`, () => {
    const long = (i: number) => `${'very-long-folder/'.repeat(200)}${i}.sql`
    const risk = Object.fromEntries(
      Array.from({ length: 100 }, (_, c) => [`category-${c}`, [long(1), long(2), long(3)]])
    )
    const issues = Array.from({ length: 50 }, (_, i) => `PROJECTNAME-${100000000 + i}`)
    const closes = Array.from(
      { length: 50 },
      (_, i) => `${'o'.repeat(39)}/${'r'.repeat(100)}#${i + 1}`
    )
    const fields = shippedMetadata(shipped({ commitCount: 7 }), {
      risk,
      riskComplete: true,
      issues,
      issueCount: 70,
      closes
    })
    expect(Buffer.byteLength(JSON.stringify(fields))).toBeLessThanOrEqual(
      MAX_SHIPPED_METADATA_BYTES
    )
    expect(Object.keys(fields.risk as object)).toEqual(Object.keys(risk))
    expect(fields).toMatchObject({ commit_count: 7, issue_count: 70, risk_complete: true })
    // The largest list gave way (the paths); the smaller ones are whole.
    expect(fields).toMatchObject({ issues, closes })
    expect(fields).not.toHaveProperty('close_count')
  })

  it('keeps the newest issues and closed issues, the first of their lists, when they must give way', () => {
    // Categories whose names alone take nearly all the room: only the issues can give way.
    const risk = Object.fromEntries(
      Array.from({ length: 100 }, (_, c) => [`${'c'.repeat(300)}${c}`, [] as string[]])
    )
    const newestFirst = (count: number) => Array.from({ length: count }, (_, i) => count - i)
    const issues = newestFirst(50).map(n => `PROJECTNAME-${100000000 + n}`)
    const closes = newestFirst(50).map(n => `${'o'.repeat(39)}/${'r'.repeat(100)}#${n}`)
    const fields = shippedMetadata(shipped({ commitCount: 7 }), {
      risk,
      riskComplete: true,
      issues,
      issueCount: 70,
      closes,
      closeCount: 60
    })
    expect(Buffer.byteLength(JSON.stringify(fields))).toBeLessThanOrEqual(
      MAX_SHIPPED_METADATA_BYTES
    )
    const keptIssues = fields.issues as string[]
    const keptCloses = fields.closes as string[]
    expect(keptIssues.length).toBeGreaterThan(0)
    expect(keptIssues.length).toBeLessThan(50)
    expect(keptIssues).toEqual(issues.slice(0, keptIssues.length))
    expect(keptCloses.length).toBeGreaterThan(0)
    expect(keptCloses.length).toBeLessThan(50)
    expect(keptCloses).toEqual(closes.slice(0, keptCloses.length))
    expect(fields).toMatchObject({ issue_count: 70, close_count: 60 })
  })
})

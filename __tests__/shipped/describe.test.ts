/** The description and the metadata of what a change ships, and pull requests in messages. */
import { describe, expect, it } from '@jest/globals'
import { describeDeploy, MAX_DESCRIPTION_CHARS } from '../../src/shipped/describe.ts'
import { MAX_SHIPPED_METADATA_BYTES, shippedMetadata } from '../../src/shipped/metadata.ts'
import { pullRequestInMessage } from '../../src/shipped/pull-requests.ts'
import { emptyShipped, type Shipped } from '../../src/shipped/types.ts'
import { sha } from './github-fixtures.ts'

const VERSION = '6113728' + sha('v').slice(7)
const PREVIOUS = '9f2c1d0' + sha('p').slice(7)

function shipped(overrides: Partial<Shipped>): Shipped {
  return { ...emptyShipped(), previousSha: PREVIOUS, source: 'deployment', ...overrides }
}

const pulls = [
  { number: 41, title: 'Add login', url: 'https://github.com/acme/shop/pull/41' },
  { number: 42, title: 'Fix cart', url: 'https://github.com/acme/shop/pull/42' },
  { number: 43, url: 'https://github.com/acme/shop/pull/43' }
]
const base = { repository: 'acme/shop', version: VERSION, environment: 'production' }

describe('describeDeploy', () => {
  it('names the commits since the previous deploy and the pull requests that fit', () => {
    const text = describeDeploy({
      ...base,
      shipped: shipped({
        commitCount: 3,
        commits: [{ sha: sha('a'), message: 'x' }],
        pullRequests: pulls,
        pullRequestCount: 4
      })
    })
    expect(text).toBe(
      'Deploy acme/shop 6113728 to production: 3 commits since 9f2c1d0 (#41 Add login, #42 Fix cart, #43, +1 more)'
    )
  })

  it("uses the head commit's first line for one commit", () => {
    const text = describeDeploy({
      ...base,
      shipped: shipped({
        commitCount: 1,
        commits: [{ sha: sha('a'), message: 'Add login (#41)' }],
        pullRequests: pulls.slice(0, 1),
        pullRequestCount: 1
      })
    })
    expect(text).toBe('Deploy acme/shop 6113728 to production: Add login (#41)')
  })

  it('says a rollback plainly', () => {
    const text = describeDeploy({
      repository: 'acme/shop',
      version: PREVIOUS,
      environment: 'production',
      shipped: shipped({ previousSha: VERSION, rollback: true, commitCount: 0 })
    })
    expect(text).toBe('Rollback acme/shop to 9f2c1d0 in production (was 6113728)')
  })

  it('names the service and its matching files', () => {
    const text = describeDeploy({
      ...base,
      serviceName: 'api',
      matchingFiles: 4,
      shipped: shipped({ commitCount: 3 })
    })
    expect(text).toBe(
      'Deploy api of acme/shop 6113728 to production: 4 matching files changed in 3 commits since 9f2c1d0'
    )
  })

  it('says nothing new when the range is empty, and undefined when nothing is known', () => {
    expect(describeDeploy({ ...base, shipped: shipped({ commitCount: 0 }) })).toBe(
      'Deploy acme/shop 6113728 to production: no new commits since 9f2c1d0'
    )
    expect(describeDeploy({ ...base, shipped: emptyShipped() })).toBeUndefined()
  })

  it(`stays within ${MAX_DESCRIPTION_CHARS} characters, whatever the titles, service or message`, () => {
    const long = 'x'.repeat(5000)
    const many = Array.from({ length: 20 }, (_, i) => ({
      number: 1000 + i,
      title: `Title ${i} ${long}`,
      url: 'u'
    }))
    const listed = describeDeploy({
      ...base,
      shipped: shipped({ commitCount: 90, pullRequests: many, pullRequestCount: 25 })
    }) as string
    expect(listed.length).toBeLessThanOrEqual(MAX_DESCRIPTION_CHARS)
    // The list gives way whole items at a time, and the count of the rest stays.
    expect(listed).toMatch(/\(#1000 Title 0 x+…, \+24 more\)$/)
    const single = describeDeploy({
      ...base,
      serviceName: long,
      shipped: shipped({ commitCount: 1, commits: [{ sha: sha('a'), message: long }] })
    }) as string
    expect(Array.from(single)).toHaveLength(MAX_DESCRIPTION_CHARS)
    expect(single.endsWith('…')).toBe(true)
  })
})

describe('shippedMetadata', () => {
  it('gives the fields that are known, rollback only when true', () => {
    const fields = shippedMetadata(
      shipped({
        compareUrl: 'https://github.com/acme/shop/compare/a...b',
        commitCount: 2,
        commits: [{ sha: sha('a'), message: 'one', author: 'alice' }],
        pullRequests: pulls.slice(0, 1),
        pullRequestCount: 1,
        runStartedAt: '2026-03-01T10:00:05Z'
      })
    )
    expect(fields).toEqual({
      previous_sha: PREVIOUS,
      compare_url: 'https://github.com/acme/shop/compare/a...b',
      commit_count: 2,
      commits: [{ sha: sha('a'), message: 'one', author: 'alice' }],
      pull_requests: [pulls[0]],
      run_started_at: '2026-03-01T10:00:05Z'
    })
    expect(shippedMetadata(shipped({ rollback: true }))).toMatchObject({ rollback: true })
  })

  it(`stays under ${MAX_SHIPPED_METADATA_BYTES} bytes, keeping the newest entries and exact counts`, () => {
    // 200 characters of 4-byte emoji: 800 bytes a message.
    const message = '😀'.repeat(100)
    const commits = Array.from({ length: 50 }, (_, i) => ({
      sha: sha(`c${i}`),
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
    expect(kept.at(-1)?.sha).toBe(sha('c49'))
    expect(fields.commit_count).toBe(600)
    expect(fields.pull_request_count).toBe(70)
  })
})

describe('pullRequestInMessage', () => {
  it.each([
    ['Add login (#41)', { number: 41, title: 'Add login' }],
    ['Fix (#12) again (#13)\n\nbody', { number: 13, title: 'Fix (#12) again' }],
    [
      'Merge pull request #42 from acme/cart\n\nFix cart\n\nmore',
      { number: 42, title: 'Fix cart' }
    ],
    ['Merge pull request #7 from fork/x', { number: 7 }],
    ['Mention #41 in passing', undefined],
    ['(#5) at the start is a title of its own', undefined],
    ['Nothing here', undefined]
  ])('%j', (message, expected) => {
    expect(pullRequestInMessage(message)).toEqual(expected)
  })

  it('reads a very long line in linear time', () => {
    const started = Date.now()
    pullRequestInMessage(`${' '.repeat(200_000)}x (#1`)
    expect(Date.now() - started).toBeLessThan(200)
  })
})

/** The description of a deploy when what it ships is known. */
import { describe, expect, it } from '@jest/globals'
import { createHash } from 'node:crypto'
import { describeDeploy, MAX_DESCRIPTION_CHARS } from '../../src/shipped/describe.ts'
import { emptyShipped, type Shipped } from '../../src/shipped/types.ts'

const sha = (seed: string): string => createHash('sha1').update(seed).digest('hex')
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

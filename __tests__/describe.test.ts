/** A change's default description: what shipped, the event's words, how the deploy ended. */
import { describe, expect, it } from '@jest/globals'
import { createHash } from 'node:crypto'
import type { DeployRecord } from '../src/deploy.ts'
import { describeChange, MAX_DESCRIPTION_CHARS } from '../src/describe.ts'
import { emptyShipped, type Shipped } from '../src/shipped/types.ts'

const sha = (seed: string): string => createHash('sha1').update(seed).digest('hex')
const STARTED = Date.parse('2026-11-23T10:00:00Z')
const ended = (outcome: DeployRecord['outcome'], seconds: number): DeployRecord => ({
  outcome,
  status: outcome,
  startedAt: STARTED,
  finishedAt: STARTED + seconds * 1000
})

const VERSION = '6113728' + sha('v').slice(7)
const PREVIOUS = '9f2c1d0' + sha('p').slice(7)

/** A range read whole, unless said otherwise. */
function shipped(overrides: Partial<Shipped>): Shipped {
  const known = { previousSha: PREVIOUS, source: 'deployment' as const, pullRequestsComplete: true }
  return { ...emptyShipped(), ...known, ...overrides }
}

const pulls = [
  { number: 41, title: 'Add login', url: 'https://github.com/acme/shop/pull/41' },
  { number: 42, title: 'Fix cart', url: 'https://github.com/acme/shop/pull/42' },
  { number: 43, url: 'https://github.com/acme/shop/pull/43' }
]
const base = { repository: 'acme/shop', version: VERSION, environment: 'production' }

describe('describeChange with what shipped', () => {
  it('names the commits since the previous deploy and the pull requests that fit', () => {
    const text = describeChange({
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

  it('names merge requests as GitLab does, !N, on GitLab', () => {
    const web = 'https://gitlab.example.com/acme/shop'
    const requests = [
      { number: 41, title: 'Add login', url: `${web}/-/merge_requests/41` },
      { number: 42, title: 'Fix cart', url: `${web}/-/merge_requests/42` }
    ]
    const gitlab = {
      commitCount: 3,
      forge: { kind: 'gitlab', web } as const,
      pullRequests: requests,
      pullRequestCount: 2
    }
    expect(describeChange({ ...base, shipped: shipped(gitlab) })).toBe(
      'Deploy acme/shop 6113728 to production: 3 commits since 9f2c1d0 (!41 Add login, !42 Fix cart)'
    )
    // No title fits: the count, in GitLab's word.
    const event = 'e'.repeat(155)
    expect(describeChange({ event, shipped: shipped(gitlab) })).toMatch(/ \(2 merge requests\)$/)
  })

  it('states no count it does not know when commits were left unread', () => {
    const partial = { commitCount: 3000, pullRequests: pulls, pullRequestsComplete: false }
    expect(
      describeChange({ ...base, shipped: shipped({ ...partial, pullRequestCount: 40 }) })
    ).toBe(
      'Deploy acme/shop 6113728 to production: 3000 commits since 9f2c1d0 (#41 Add login, #42 Fix cart, #43, +more)'
    )
    // All that was found fits: there may be more, and nothing says there are none.
    expect(
      describeChange({ ...base, shipped: shipped({ ...partial, pullRequestCount: 3 }) })
    ).toMatch(/3000 commits since 9f2c1d0 \(#41 Add login, #42 Fix cart, #43\)$/)
    // No title fits: the bare count of a read range, and nothing when it is not known.
    const event = 'e'.repeat(150)
    const none = { commitCount: 3000, pullRequestCount: 7, pullRequests: pulls }
    expect(describeChange({ event, shipped: shipped(none) })).toMatch(/ \(7 pull requests\)$/)
    expect(
      describeChange({ event, shipped: shipped({ ...none, pullRequestsComplete: false }) })
    ).toBe(`${event}: 3000 commits since 9f2c1d0`)
  })

  it("uses the head commit's first line for one commit", () => {
    const text = describeChange({
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
    const text = describeChange({
      repository: 'acme/shop',
      version: PREVIOUS,
      environment: 'production',
      shipped: shipped({ previousSha: VERSION, rollback: true, commitCount: 0 })
    })
    expect(text).toBe('Deploy acme/shop 9f2c1d0 to production: rollback from 6113728')
  })

  it('names the service and its matching files', () => {
    const text = describeChange({
      ...base,
      service: { name: 'api', matchingFiles: 4 },
      shipped: shipped({ commitCount: 3 })
    })
    expect(text).toBe(
      'api: Deploy acme/shop 6113728 to production: 4 matching files changed in 3 commits since 9f2c1d0'
    )
  })

  it("says nothing new when the range is empty, and keeps the event's words when nothing is known", () => {
    expect(describeChange({ ...base, shipped: shipped({ commitCount: 0 }) })).toBe(
      'Deploy acme/shop 6113728 to production: no new commits since 9f2c1d0'
    )
    expect(describeChange({ ...base, event: 'Release v1.2.3', shipped: emptyShipped() })).toBe(
      'Release v1.2.3'
    )
  })

  it(`stays within ${MAX_DESCRIPTION_CHARS} characters, whatever the titles, service or message`, () => {
    const long = 'x'.repeat(5000)
    const many = Array.from({ length: 20 }, (_, i) => ({
      number: 1000 + i,
      title: `Title ${i} ${long}`,
      url: 'u'
    }))
    const listed = describeChange({
      ...base,
      shipped: shipped({ commitCount: 90, pullRequests: many, pullRequestCount: 25 })
    })
    expect(listed.length).toBeLessThanOrEqual(MAX_DESCRIPTION_CHARS)
    // The list gives way whole items at a time, and the count of the rest stays.
    expect(listed).toMatch(/\(#1000 Title 0 x+…, \+24 more\)$/)
    const single = describeChange({
      ...base,
      service: { name: long },
      shipped: shipped({ commitCount: 1, commits: [{ sha: sha('a'), message: long }] })
    })
    expect(Array.from(single)).toHaveLength(MAX_DESCRIPTION_CHARS)
    expect(single.endsWith('…')).toBe(true)
  })
})

describe('describeChange without what shipped', () => {
  it("uses the event's words on one line, or else names the action", () => {
    expect(describeChange({ event: 'Pull request #42\n"Fix\u2028it"' })).toBe(
      'Pull request #42 "Fix it"'
    )
    expect(describeChange({ event: ' \t' })).toBe('Change recorded by change-tracking-action')
    expect(describeChange({})).toBe('Change recorded by change-tracking-action')
  })
})

describe('describeChange at a job’s end', () => {
  it('says how the deploy ended when it did not succeed', () => {
    const event = 'Deploy acme/shop'
    expect(describeChange({ event, deploy: ended('success', 252) })).toBe(event)
    expect(describeChange({ event, deploy: ended('failure', 252) })).toBe(
      'Deploy acme/shop failed after 4 min 12 s'
    )
    expect(describeChange({ event, deploy: ended('cancelled', 38) })).toBe(
      'Deploy acme/shop cancelled after 38 s'
    )
    expect(describeChange({ event, deploy: ended('unknown', 5) })).toBe(
      'Deploy acme/shop ended with an unknown status after 5 s'
    )
  })

  it(`keeps the outcome whole within ${MAX_DESCRIPTION_CHARS} characters`, () => {
    const text = describeChange({ event: 'y'.repeat(500), deploy: ended('failure', 3700) })
    expect(Array.from(text)).toHaveLength(MAX_DESCRIPTION_CHARS)
    expect(text).toMatch(/^y+… failed after 1 h 1 min$/)
  })
})

describe("describeChange: the event's words, then what shipped", () => {
  const three = (): Shipped => shipped({ commitCount: 3 })

  it('keeps the event’s own words and adds what shipped to them', () => {
    expect(
      describeChange({ ...base, event: 'Release v1.2.3 of acme/shop', shipped: three() })
    ).toBe('Release v1.2.3 of acme/shop: 3 commits since 9f2c1d0')
    expect(
      describeChange({
        ...base,
        event: 'Deploy 6113728 of acme/shop to production failed',
        shipped: three()
      })
    ).toBe('Deploy 6113728 of acme/shop to production failed: 3 commits since 9f2c1d0')
  })

  it('says how a job-end deploy ended before what it shipped', () => {
    expect(
      describeChange({
        ...base,
        event: 'Deploy 6113728 on main',
        shipped: three(),
        deploy: ended('failure', 9)
      })
    ).toBe('Deploy 6113728 on main failed after 9 s: 3 commits since 9f2c1d0')
  })

  it('lets what shipped give way first when the description must be cut, and keeps the outcome', () => {
    const event = 'e'.repeat(150)
    const long = shipped({ commitCount: 1, commits: [{ sha: sha('a'), message: 'm'.repeat(300) }] })
    const text = describeChange({ ...base, event, shipped: long, deploy: ended('failure', 9) })
    expect(Array.from(text)).toHaveLength(MAX_DESCRIPTION_CHARS)
    expect(text).toMatch(/^e{150} failed after 9 s: m+…$/)
    const huge = describeChange({
      ...base,
      event: 'e'.repeat(500),
      shipped: long,
      deploy: ended('cancelled', 38)
    })
    expect(Array.from(huge)).toHaveLength(MAX_DESCRIPTION_CHARS)
    expect(huge).toMatch(/^e+… cancelled after 38 s$/)
  })
})

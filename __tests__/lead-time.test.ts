import { describe, expect, it } from '@jest/globals'
import { leadTime } from '../src/lead-time.ts'
import { shippedFromPushPayload } from '../src/shipped/push-payload.ts'

const RECORDED = Date.parse('2026-11-23T12:00:00Z')
const hoursBefore = (hours: number): string => new Date(RECORDED - hours * 3600_000).toISOString()

describe('leadTime', () => {
  it('is absent when no commit has a date', () => {
    expect(leadTime([], RECORDED)).toBeUndefined()
    expect(leadTime([{}, { committedAt: 'yesterday' }], RECORDED)).toBeUndefined()
  })

  it('is that commit’s wait for a single commit', () => {
    expect(leadTime([{ committedAt: hoursBefore(2) }], RECORDED)).toEqual({
      median: 7200,
      max: 7200,
      commits: 1,
      dropped: 0
    })
  })

  it('gives the median and the longest wait, in whole seconds, of the commits with a date', () => {
    const commits = [
      { committedAt: hoursBefore(10) },
      {},
      { committedAt: hoursBefore(1) },
      { committedAt: hoursBefore(3) },
      { committedAt: hoursBefore(2) }
    ]
    expect(leadTime(commits, RECORDED)).toEqual({
      median: 2.5 * 3600,
      max: 36_000,
      commits: 4,
      dropped: 0
    })
  })

  it('counts a commit dated up to 5 minutes after the recording (a skewed clock) as no wait', () => {
    const skewed = [{ committedAt: new Date(RECORDED + 5 * 60_000).toISOString() }]
    expect(leadTime(skewed, RECORDED)).toEqual({ median: 0, max: 0, commits: 1, dropped: 0 })
  })

  it('drops, never clamps, a commit dated later than that or before Git existed, and says how many', () => {
    const commits = [
      { committedAt: hoursBefore(1) },
      { committedAt: hoursBefore(3) },
      { committedAt: new Date(RECORDED + 5 * 60_000 + 1000).toISOString() },
      { committedAt: hoursBefore(24 * 365) },
      { committedAt: '1970-01-01T00:00:00Z' },
      { committedAt: '0001-01-01T00:00:00Z' },
      { committedAt: '2004-12-31T23:59:59Z' }
    ]
    expect(leadTime(commits, RECORDED)).toEqual({
      median: 3 * 3600,
      max: 365 * 24 * 3600,
      commits: 3,
      dropped: 4
    })
    expect(leadTime(commits.slice(2, 3), RECORDED)).toBeUndefined()
  })
})

describe('lead time from a push payload', () => {
  it('reads each commit’s timestamp', () => {
    const after = 'b'.repeat(40)
    const push = shippedFromPushPayload(
      'push',
      {
        before: 'a'.repeat(40),
        after,
        commits: [
          { id: 'c'.repeat(40), message: 'One', timestamp: '2026-11-23T11:00:00+01:00' },
          { id: after, message: 'Two', timestamp: hoursBefore(1) }
        ]
      },
      after
    )
    expect(leadTime(push?.commits ?? [], RECORDED)).toEqual({
      median: 5400,
      max: 7200,
      commits: 2,
      dropped: 0
    })
  })
})

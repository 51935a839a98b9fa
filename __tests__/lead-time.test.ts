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
      max: 7200
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
    expect(leadTime(commits, RECORDED)).toEqual({ median: 2.5 * 3600, max: 36_000 })
  })

  it('counts a commit dated after the recording (a skewed clock) as no wait', () => {
    expect(leadTime([{ committedAt: hoursBefore(-1) }], RECORDED)).toEqual({ median: 0, max: 0 })
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
    expect(leadTime(push?.commits ?? [], RECORDED)).toEqual({ median: 5400, max: 7200 })
  })
})

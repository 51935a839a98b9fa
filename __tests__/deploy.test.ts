import { describe, expect, it } from '@jest/globals'
import { buildChangeRequest } from '../src/change.ts'
import {
  deployMetadata,
  describeOutcome,
  durationSeconds,
  formatDuration,
  withDeploy,
  type DeployRecord
} from '../src/deploy.ts'

const STARTED = Date.parse('2026-11-23T10:00:00.400Z')
const deploy = (outcome: DeployRecord['outcome'], seconds: number): DeployRecord => ({
  outcome,
  startedAt: STARTED,
  finishedAt: STARTED + seconds * 1000
})

describe('formatDuration', () => {
  it.each([
    [0, '0 s'],
    [38, '38 s'],
    [60, '1 min'],
    [252, '4 min 12 s'],
    [3600, '1 h'],
    [3900, '1 h 5 min'],
    [-5, '0 s']
  ])('words %d seconds as %s', (seconds, words) => {
    expect(formatDuration(seconds)).toBe(words)
  })
})

describe('a deploy recorded at the job’s end', () => {
  it('is timed in whole seconds, never negative', () => {
    expect(durationSeconds(deploy('success', 251.6))).toBe(252)
    expect(durationSeconds({ ...deploy('success', 0), finishedAt: STARTED - 5000 })).toBe(0)
  })

  it('carries its outcome, its times in UTC and its duration in the metadata', () => {
    expect(deployMetadata(deploy('failure', 252))).toEqual({
      outcome: 'failure',
      started_at: '2026-11-23T10:00:00.400Z',
      finished_at: '2026-11-23T10:04:12.400Z',
      duration_seconds: 252
    })
  })

  it('says in the description when it did not succeed', () => {
    expect(describeOutcome('Deploy acme/shop', deploy('success', 252))).toBe('Deploy acme/shop')
    expect(describeOutcome('Deploy acme/shop', deploy('failure', 252))).toBe(
      'Deploy acme/shop failed after 4 min 12 s'
    )
    expect(describeOutcome('Deploy acme/shop', deploy('cancelled', 38))).toBe(
      'Deploy acme/shop cancelled after 38 s'
    )
  })

  it('is created at the deploy’s start, and the user’s description and created-at still win', () => {
    const defaults = withDeploy(
      { description: 'Deploy acme/shop', metadata: { github: { run_id: '1' } } },
      deploy('failure', 30)
    )
    const change = buildChangeRequest({}, defaults, true)
    expect(change.created_at).toBe(Math.floor(STARTED / 1000))
    expect(change.description).toBe('Deploy acme/shop failed after 30 s')
    expect(JSON.parse(change.custom_metadata ?? '')).toMatchObject({
      github: { run_id: '1' },
      deploy: { outcome: 'failure' }
    })
    const mine = buildChangeRequest({ description: 'Mine', createdAt: 5 }, defaults, true)
    expect(mine.description).toBe('Mine')
    expect(mine.created_at).toBe(5)
  })

  it('leaves the defaults alone when recorded at once', () => {
    const defaults = { description: 'Deploy', metadata: {} }
    expect(withDeploy(defaults, undefined)).toBe(defaults)
  })
})

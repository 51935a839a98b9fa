import { describe, expect, it } from '@jest/globals'
import {
  deployMetadata,
  durationSeconds,
  formatDuration,
  outcomeOf,
  type DeployRecord
} from '../src/deploy.ts'

const STARTED = Date.parse('2026-11-23T10:00:00.400Z')
const deploy = (outcome: DeployRecord['outcome'], seconds: number): DeployRecord => ({
  outcome,
  status: outcome,
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
      status: 'failure',
      started_at: '2026-11-23T10:00:00.400Z',
      finished_at: '2026-11-23T10:04:12.400Z',
      duration_seconds: 252
    })
  })
})

describe('outcomeOf', () => {
  it.each([
    ['success', 'success'],
    ['failure', 'failure'],
    ['error', 'failure'],
    ['timed_out', 'failure'],
    ['startup_failure', 'failure'],
    ['cancelled', 'cancelled'],
    ['pending', 'unknown'],
    ['neutral', 'unknown'],
    ['constructor', 'unknown'],
    ['', 'unknown']
  ])('reads %j as %s', (status, outcome) => {
    expect(outcomeOf(status)).toBe(outcome)
  })
})

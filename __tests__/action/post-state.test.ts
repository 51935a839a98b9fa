import { describe, expect, it } from '@jest/globals'
import {
  checkedStart,
  isPostStep,
  jobEndStateText,
  readJobEndState
} from '../../src/action/post-state.ts'

const NOW = Date.parse('2026-11-24T12:00:00Z')
const DAY = 24 * 60 * 60 * 1000

describe('the state the main step leaves the post step', () => {
  it('round-trips the start time through STATE_jobEnd', () => {
    const text = jobEndStateText(1_795_000_000_123)
    expect(readJobEndState({ STATE_jobEnd: text })).toEqual({ startedAt: 1_795_000_000_123 })
  })

  it('carries the job’s environment the main step read', () => {
    const text = jobEndStateText(1_795_000_000_123, 'production')
    expect(readJobEndState({ STATE_jobEnd: text })).toEqual({
      startedAt: 1_795_000_000_123,
      environment: 'production'
    })
    expect(JSON.parse(jobEndStateText(1_795_000_000_123))).toEqual({ startedAt: 1_795_000_000_123 })
  })

  it('keeps the environment when the start cannot be read', () => {
    expect(readJobEndState({ STATE_jobEnd: '{"environment":"staging"}' })).toEqual({
      problem: 'the start the main step saved cannot be read',
      environment: 'staging'
    })
  })

  it.each([['""'], ['7'], ['"a\\nb"'], [`"${'e'.repeat(256)}"`], ['{"name":"x"}']])(
    'leaves out a saved environment of %s, which cannot be one',
    environment => {
      const saved = `{"startedAt":1795000000123,"environment":${environment}}`
      expect(readJobEndState({ STATE_jobEnd: saved })).toEqual({ startedAt: 1_795_000_000_123 })
    }
  )

  it('is absent when the main step saved none: a run that recorded at once', () => {
    expect(readJobEndState({})).toBeUndefined()
    expect(readJobEndState({ STATE_jobEnd: '' })).toBeUndefined()
  })

  it.each(['not json', '{}', '{"startedAt":"soon"}', '{"startedAt":1.5}', 'null', '[]'])(
    'says why a saved state %j cannot be read',
    saved => {
      expect(readJobEndState({ STATE_jobEnd: saved })).toEqual({
        problem: 'the start the main step saved cannot be read'
      })
    }
  )

  it('tells the post step by the state every main step saves first', () => {
    expect(isPostStep({ STATE_isPost: 'true' })).toBe(true)
    expect(isPostStep({})).toBe(false)
  })
})

describe('a saved start the post step can use', () => {
  it('is one within the last 6 days, up to the post step’s own start', () => {
    for (const startedAt of [NOW, NOW - 1000, NOW - 6 * DAY]) {
      expect(checkedStart({ startedAt }, NOW)).toEqual({ startedAt })
    }
  })

  it.each([
    ['after the post step’s start', NOW + 1, "is after the post step's"],
    ['more than 6 days old', NOW - 6 * DAY - 1, 'is more than 6 days old'],
    ['in year 3000', Date.parse('3000-01-01T00:00:00Z'), "is after the post step's"],
    ['the largest date', 8.64e15, "is after the post step's"],
    ['1 ms after the epoch', 1, 'is more than 6 days old'],
    ['negative', -1, 'is more than 6 days old']
  ])('is not one %s', (_what, startedAt, problem) => {
    const checked = checkedStart({ startedAt }, NOW)
    expect(checked.startedAt).toBeUndefined()
    expect(checked.problem).toContain(problem)
  })
})

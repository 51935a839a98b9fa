import { describe, expect, it } from '@jest/globals'
import { isPostStep, jobEndStateText, readJobEndState } from '../../src/action/post-state.ts'

describe('the state the main step leaves the post step', () => {
  it('round-trips the start time through STATE_jobEnd', () => {
    const text = jobEndStateText({ startedAt: 1_795_000_000_123 })
    expect(readJobEndState({ STATE_jobEnd: text })).toEqual({ startedAt: 1_795_000_000_123 })
  })

  it.each([undefined, '', 'not json', '{}', '{"startedAt":"soon"}', '{"startedAt":-1}', 'null'])(
    'reads no job-end state from %j',
    saved => {
      expect(readJobEndState({ STATE_jobEnd: saved })).toBeUndefined()
    }
  )

  it('tells the post step by the state every main step saves first', () => {
    expect(isPostStep({ STATE_isPost: 'true' })).toBe(true)
    expect(isPostStep({})).toBe(false)
  })
})

import { describe, expect, it } from '@jest/globals'
import { parseJobStatus } from '../../src/action/parsers.ts'

describe('parseJobStatus', () => {
  it.each([
    ['success', 'success'],
    ['failure', 'failure'],
    ['cancelled', 'cancelled'],
    [' Failure ', 'failure'],
    ['skipped', 'unknown'],
    ['', 'unknown'],
    ['${{ job.status }}', 'unknown']
  ])('reads %j as %s', (status, outcome) => {
    expect(parseJobStatus(status).outcome).toBe(outcome)
  })
})

import { describe, expect, it } from '@jest/globals'
import { MAX_SCANNED_CHARS_PER_TEXT } from '../../src/triage/issue-keys.ts'
import { MAX_REVERTS, remediationOf, type RemediationInput } from '../../src/triage/remediation.ts'
import { runWithin } from '../../src/time-bound.ts'

const SHA = '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c'

function remediation(input: Partial<RemediationInput>) {
  return remediationOf({ messages: [], pullRequests: [], ...input })
}

describe('remediationOf', () => {
  it('finds nothing in an ordinary deploy', () => {
    expect(
      remediation({
        messages: ['Add login\n\nRevert the old flow later.'],
        pullRequests: [{ number: 4, title: 'Add login' }, { number: 5 }],
        branch: 'feature/hotfix-ui'
      })
    ).toBeUndefined()
  })

  it('reads a revert from the line git writes, on any line, every SHA of 7 to 40 hex digits', () => {
    const messages = [
      `Revert "Add login"\n\nThis reverts commit ${SHA}.`,
      'Undo two\n\nThis reverts commit ABCDEF1.\nthis reverts commit 1234567',
      'This reverts commit 123456 (too short), This reverts commit abcdefg1 (not hex)'
    ]
    expect(remediation({ messages })).toEqual({
      type: 'revert',
      reverts: [SHA, 'abcdef1', '1234567']
    })
  })

  it("reads a revert from the title GitHub's Revert button gives a pull request, after the SHAs", () => {
    const pullRequests = [
      { number: 41, title: 'Revert "Add login"' },
      { number: 42, title: 'revert "Fix cart"' },
      { number: 43, title: 'Revert the cart change' }
    ]
    expect(remediation({ messages: [`This reverts commit ${SHA}.`, 'x'], pullRequests })).toEqual({
      type: 'revert',
      reverts: [SHA, '#41', '#42']
    })
  })

  it('lists each reverted commit once, and at most MAX_REVERTS', () => {
    const shas = Array.from({ length: MAX_REVERTS + 5 }, (_, i) => `abcdef${i.toString(16)}0`)
    const messages = [...shas, shas[0]].map(sha => `This reverts commit ${sha}.`)
    expect(remediation({ messages })).toEqual({
      type: 'revert',
      reverts: shas.slice(0, MAX_REVERTS)
    })
  })

  it('reads a hotfix from the branch or a pull request title, in any case', () => {
    for (const branch of ['hotfix/login', 'HOTFIX-42']) {
      expect(remediation({ branch })).toEqual({ type: 'hotfix' })
    }
    for (const title of ['Hotfix: login', '[HOTFIX] login', 'hotfixes for login']) {
      expect(remediation({ pullRequests: [{ number: 1, title }] })).toEqual({ type: 'hotfix' })
    }
    for (const branch of ['hotfix', 'fix/hotfix-login', 'hotfixes']) {
      expect(remediation({ branch })).toBeUndefined()
    }
  })

  it('prefers the fix the user names, then a rollback, then a revert, then a hotfix', () => {
    const detected = {
      messages: [`This reverts commit ${SHA}.`],
      branch: 'hotfix/login',
      rollbackOf: SHA
    }
    expect(remediation({ ...detected, remediates: ' v1.2.3 ' })).toEqual({
      type: 'fix',
      of: 'v1.2.3'
    })
    expect(remediation(detected)).toEqual({ type: 'rollback', of: SHA })
    expect(remediation({ ...detected, rollbackOf: undefined })).toEqual({
      type: 'revert',
      reverts: [SHA]
    })
    expect(remediation({ branch: 'hotfix/login', remediates: '  ' })).toEqual({ type: 'hotfix' })
  })

  it('reads each message up to the scan bound', () => {
    const message = `${' '.repeat(MAX_SCANNED_CHARS_PER_TEXT)}This reverts commit ${SHA}.`
    expect(remediation({ messages: [message] })).toBeUndefined()
  })

  it('reads hostile messages and titles in linear time', () => {
    /** Far above a linear scan, far below a backtracking one. */
    const MARGIN_MS = 10_000
    const huge = (unit: string) => unit.repeat(Math.ceil((1 << 20) / unit.length))
    const input = {
      messages: [huge('This reverts commit '), huge('This reverts commit a'), huge('a')],
      pullRequests: [
        { number: 1, title: `${huge(' ')}x` },
        { number: 2, title: huge('Revert ') }
      ],
      branch: huge('hotfix')
    }
    expect(runWithin(MARGIN_MS, () => remediation(input))).toEqual({
      finished: true,
      value: undefined
    })
  })
})

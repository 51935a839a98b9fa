import { describe, expect, it } from '@jest/globals'
import { MAX_SCANNED_CHARS_PER_TEXT } from '../../src/triage/issue-keys.ts'
import { MAX_CLOSES, MAX_ISSUES, triage, type TriageInput } from '../../src/triage/triage.ts'

const SHA = '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c'
const RISK = { risk: { migration: ['db/migrate/1_users.rb'] }, riskComplete: true }

const DEPLOY: TriageInput = {
  messages: [
    'Add login (#41)\n\nENG-142: the form.\nFixes #88',
    `Revert "Add cart"\n\nThis reverts commit ${SHA}.`
  ],
  pullRequests: [{ number: 41, title: 'OPS-7 Add login' }],
  branch: 'feature/ENG-140-login',
  issueKeys: 'auto',
  repository: 'acme/shop',
  serverUrl: 'https://github.com',
  everyCommitRead: true
}

function empty(input: Partial<TriageInput>): TriageInput {
  return {
    messages: [],
    pullRequests: [],
    issueKeys: 'auto',
    repository: 'acme/shop',
    serverUrl: 'https://github.com',
    everyCommitRead: true,
    ...input
  }
}

describe('triage', () => {
  it('reads keys from the branch, then titles, then messages; closed issues and remediation, beside the risk', () => {
    expect(triage(DEPLOY, RISK)).toEqual({
      issues: ['ENG-140', 'OPS-7', 'ENG-142'],
      closes: ['#88'],
      risk: { migration: ['db/migrate/1_users.rb'] },
      riskComplete: true,
      remediation: { type: 'revert', reverts: [SHA] }
    })
  })

  it('leaves out what it did not find', () => {
    expect(triage(empty({}), { riskComplete: false })).toEqual({ riskComplete: false })
  })

  it('reads closed issues but no keys with issue-keys none', () => {
    const found = triage({ ...DEPLOY, issueKeys: 'none' }, RISK)
    expect(found.issues).toBeUndefined()
    expect(found.closes).toEqual(['#88'])
  })

  it('records the fix the user names over a detected rollback', () => {
    const found = triage({ ...DEPLOY, remediates: 'chg_123', rollbackOf: SHA }, RISK)
    expect(found.remediation).toEqual({ type: 'fix', of: 'chg_123' })
  })

  it('lists at most MAX_ISSUES keys with their exact count, and at most MAX_CLOSES closed issues', () => {
    const count = Math.max(MAX_ISSUES, MAX_CLOSES) + 7
    const messages = Array.from({ length: count }, (_, i) => `ENG-${i + 1}\n\nFixes #${i + 1}`)
    const found = triage(empty({ messages }), RISK)
    expect(found.issues).toEqual(messages.slice(0, MAX_ISSUES).map((_, i) => `ENG-${i + 1}`))
    expect(found.issueCount).toBe(count)
    expect(found.closes).toEqual(messages.slice(0, MAX_CLOSES).map((_, i) => `#${i + 1}`))
    expect(found.closeCount).toBe(count)
  })

  it('says the issues found are a part when some shipped commits were not read', () => {
    expect(triage({ ...DEPLOY, everyCommitRead: false }, RISK).issuesComplete).toBe(false)
    expect(triage(DEPLOY, RISK)).not.toHaveProperty('issuesComplete')
    // More text than is read: what is past the bound is unknown.
    const long = [`ENG-1 ${'x'.repeat(MAX_SCANNED_CHARS_PER_TEXT)} ENG-2`]
    expect(triage(empty({ messages: long }), RISK)).toMatchObject({
      issues: ['ENG-1'],
      issuesComplete: false
    })
    // Nothing found: nothing is claimed.
    expect(triage(empty({ everyCommitRead: false }), RISK)).not.toHaveProperty('issuesComplete')
  })

  it('gives no count when every key is listed', () => {
    const messages = Array.from({ length: MAX_ISSUES }, (_, i) => `ENG-${i + 1}`)
    expect(triage(empty({ messages }), RISK).issueCount).toBeUndefined()
  })
})

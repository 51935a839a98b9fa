import { describe, expect, it } from '@jest/globals'
import { MAX_SCANNED_CHARS_PER_TEXT } from '../../src/triage/issue-keys.ts'
import { labelsWith, MAX_ISSUE_LABELS } from '../../src/triage/labels.ts'
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

  it('lists the newest MAX_ISSUES keys and MAX_CLOSES closed issues, newest first, with their exact counts, and labels the newest', () => {
    // Sixty commits, oldest first, each with its key and its closed issue.
    const numbers = Array.from({ length: 60 }, (_, i) => i + 1)
    const messages = numbers.map(n => `ENG-${n} Change ${n}\n\nFixes #${n}`)
    const found = triage(empty({ messages }), RISK)
    const newest = numbers.toReversed()
    expect(found.issues).toEqual(newest.slice(0, MAX_ISSUES).map(n => `ENG-${n}`))
    expect(found.issueCount).toBe(60)
    expect(found.closes).toEqual(newest.slice(0, MAX_CLOSES).map(n => `#${n}`))
    expect(found.closeCount).toBe(60)
    const labels = labelsWith([], { issues: found.issues }, true)
    expect(labels).toEqual(newest.slice(0, MAX_ISSUE_LABELS).map(n => `issue:ENG-${n}`))
    // A key mentioned again by a newer commit is as new as that mention.
    const again = triage(empty({ messages: [...messages, 'ENG-1: follow-up'] }), RISK)
    expect(again.issues?.slice(0, 2)).toEqual(['ENG-1', 'ENG-60'])
  })

  it("reads the branch's keys and the titles' before the newest commit's", () => {
    const found = triage(
      empty({
        branch: 'feature/ENG-9-login',
        pullRequests: [
          { number: 1, title: 'OPS-1 Old' },
          { number: 2, title: 'OPS-2 New' }
        ],
        messages: ['ENG-1 Oldest', 'ENG-2 Newest']
      }),
      RISK
    )
    expect(found.issues).toEqual(['ENG-9', 'OPS-2', 'OPS-1', 'ENG-2', 'ENG-1'])
  })

  it('reads no revert remediation from a revert that ships with what it reverts', () => {
    const pair = {
      messages: ['Add cart', `Revert "Add cart"\n\nThis reverts commit ${SHA}.`],
      commits: [{ sha: SHA }, { sha: 'a'.repeat(40) }]
    }
    expect(triage(empty(pair), RISK)).not.toHaveProperty('remediation')
    expect(triage(empty({ ...pair, commits: undefined }), RISK).remediation).toEqual({
      type: 'revert',
      reverts: [SHA]
    })
  })

  it("closes GitLab's lists of issues, other projects' included", () => {
    const found = triage(
      empty({
        messages: [
          "Merge branch 'cart' into 'main'\n\nFix cart\n\nCloses #1, #2, and #3, group/other#22\n\nSee merge request acme/shop!42"
        ],
        serverUrl: 'https://gitlab.example.com',
        gitlab: true
      }),
      RISK
    )
    expect(found.closes).toEqual(['#1', '#2', '#3', 'group/other#22'])
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

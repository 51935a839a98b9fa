import { describe, expect, it } from '@jest/globals'
import { parseServices } from '../../src/action/services-input.ts'
import { MAX_CLOSES, MAX_ISSUES, triage, type TriageInput } from '../../src/triage/triage.ts'

const SHA = '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c'

const DEPLOY: TriageInput = {
  commits: [
    { message: 'Add login (#41)\n\nENG-142: the form.\nFixes #88' },
    { message: `Revert "Add cart"\n\nThis reverts commit ${SHA}.` }
  ],
  pullRequests: [{ number: 41, title: 'OPS-7 Add login' }],
  branch: 'feature/ENG-140-login',
  changed: { files: [{ path: 'db/migrate/1_users.rb' }, { path: 'src/a.ts' }], complete: true },
  issueKeys: 'auto',
  repository: 'acme/shop',
  serverUrl: 'https://github.com',
  outcome: 'success',
  labels: ['team:shop'],
  autoLabels: true
}

function empty(input: Partial<TriageInput>): TriageInput {
  return {
    commits: [],
    pullRequests: [],
    changed: { files: [], complete: true },
    issueKeys: 'auto',
    repository: 'acme/shop',
    serverUrl: 'https://github.com',
    autoLabels: true,
    ...input
  }
}

describe('triage', () => {
  it('reads keys from the branch, then titles, then messages; closed issues, risk and remediation', () => {
    expect(triage(DEPLOY)).toEqual({
      labels: [
        'team:shop',
        'outcome:success',
        'remediation:revert',
        'risk:migration',
        'issue:ENG-140',
        'issue:OPS-7',
        'issue:ENG-142'
      ],
      issues: ['ENG-140', 'OPS-7', 'ENG-142'],
      closes: ['#88'],
      risk: { migration: ['db/migrate/1_users.rb'] },
      riskComplete: true,
      remediation: { type: 'revert', reverts: [SHA] }
    })
  })

  it('leaves out what it did not find', () => {
    expect(triage(empty({ labels: ['team:shop'] }))).toEqual({
      labels: ['team:shop'],
      riskComplete: true
    })
  })

  it('keeps the metadata without labels when auto-labels is false', () => {
    const { labels, ...metadata } = triage({ ...DEPLOY, autoLabels: false })
    expect(labels).toEqual(['team:shop'])
    expect(metadata).toMatchObject({ issues: ['ENG-140', 'OPS-7', 'ENG-142'], closes: ['#88'] })
    expect(metadata.risk).toBeDefined()
    expect(metadata.remediation).toBeDefined()
  })

  it('reads closed issues but no keys with issue-keys none', () => {
    const found = triage({ ...DEPLOY, issueKeys: 'none' })
    expect(found.issues).toBeUndefined()
    expect(found.closes).toEqual(['#88'])
  })

  it('uses the given risk categories and the fix the user names', () => {
    const found = triage({
      ...DEPLOY,
      riskPaths: parseServices('app: src/**'),
      remediates: 'chg_123',
      rollbackOf: SHA
    })
    expect(found.risk).toEqual({ app: ['src/a.ts'] })
    expect(found.remediation).toEqual({ type: 'fix', of: 'chg_123' })
    expect(found.labels).toContain('risk:app')
    expect(found.labels).toContain('remediation:fix')
  })

  it('lists at most MAX_ISSUES keys with their exact count, and at most MAX_CLOSES closed issues', () => {
    const count = Math.max(MAX_ISSUES, MAX_CLOSES) + 7
    const commits = Array.from({ length: count }, (_, i) => ({
      message: `ENG-${i + 1}\n\nFixes #${i + 1}`
    }))
    const found = triage(empty({ commits }))
    expect(found.issues).toEqual(commits.slice(0, MAX_ISSUES).map((_, i) => `ENG-${i + 1}`))
    expect(found.issueCount).toBe(count)
    expect(found.closes).toEqual(commits.slice(0, MAX_CLOSES).map((_, i) => `#${i + 1}`))
  })

  it('gives no count when every key is listed', () => {
    const commits = Array.from({ length: MAX_ISSUES }, (_, i) => ({ message: `ENG-${i + 1}` }))
    expect(triage(empty({ commits })).issueCount).toBeUndefined()
  })
})

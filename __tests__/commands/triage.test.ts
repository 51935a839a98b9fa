/** The triage block of the summary: what an on-call engineer reads first. */
import { describe, expect, it } from '@jest/globals'
import { triageRows } from '../../src/commands/triage.ts'

const RUN = { serverUrl: 'https://ghes.example.com', repository: 'acme/shop' }
const SHA = '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c'

describe('triageRows', () => {
  it.each([
    [{ type: 'rollback' as const, of: SHA }, 'rollback of 9f8e7d6'],
    [{ type: 'fix' as const, of: 'chg_41' }, 'fix of chg_41'],
    [{ type: 'revert' as const, reverts: [SHA, '#12'] }, 'revert of 9f8e7d6, #12'],
    [
      { type: 'revert' as const, reverts: ['"Add login (ENG-1)"', 'acme/api#7'] },
      'revert of "Add login (ENG-1)", acme/api#7'
    ],
    [{ type: 'revert' as const, reverts: [] }, 'revert'],
    [{ type: 'hotfix' as const }, 'hotfix']
  ])('says the remediation %j as %s', (remediation, text) => {
    expect(triageRows({ riskComplete: true, remediation }, RUN)).toContainEqual([
      'Remediation',
      text
    ])
  })

  it('links each closed issue on the run’s server, the first 5, and counts the rest', () => {
    const closes = ['#1', 'other/repo#2', '#3', '#4', '#5', '#6']
    const rows = triageRows({ riskComplete: true, closes, closeCount: 60 }, RUN)
    expect(rows).toContainEqual([
      'Closes',
      [
        { text: '#1', url: 'https://ghes.example.com/acme/shop/issues/1' },
        { text: 'other/repo#2', url: 'https://ghes.example.com/other/repo/issues/2' },
        { text: '#3', url: 'https://ghes.example.com/acme/shop/issues/3' },
        { text: '#4', url: 'https://ghes.example.com/acme/shop/issues/4' },
        { text: '#5', url: 'https://ghes.example.com/acme/shop/issues/5' },
        { text: '+55 more' }
      ]
    ])
  })

  it('gives each risk category its paths, says when the risk is incomplete, and counts the issues beyond 5', () => {
    const issues = ['A-1', 'A-2', 'A-3', 'A-4', 'A-5', 'A-6']
    const rows = triageRows(
      {
        riskComplete: false,
        pathsRead: 300,
        risk: { migration: ['db/1.sql', 'db/2.sql'] },
        issues
      },
      RUN
    )
    expect(rows).toEqual(
      expect.arrayContaining([
        ['Risk: migration', 'db/1.sql, db/2.sql'],
        ['Risk: incomplete', 'risk read from 300 changed paths; more changed'],
        ['Issues', 'A-1, A-2, A-3, A-4, A-5 (+1 more)']
      ])
    )
  })
})

import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  MAX_ADDED_LABELS,
  MAX_ISSUE_LABELS,
  MAX_LABEL_CHARS,
  labelsWith,
  type LabelFacts
} from '../../src/triage/labels.ts'
import { hostileText, NUM_RUNS } from '../support/hostile-text.ts'

describe('labelsWith', () => {
  it("adds the action's labels after the user's, in the order outcome, remediation, risk, issues", () => {
    const facts: LabelFacts = {
      outcome: 'failure',
      remediation: 'revert',
      risk: ['migration', 'ci'],
      issues: ['ENG-142', 'OPS-7']
    }
    expect(labelsWith([' team:shop ', 'tier:1'], facts, true)).toEqual([
      'team:shop',
      'tier:1',
      'outcome:failure',
      'remediation:revert',
      'risk:migration',
      'risk:ci',
      'issue:ENG-142',
      'issue:OPS-7'
    ])
  })

  it('adds only what is known: never an unknown outcome', () => {
    expect(labelsWith([], { outcome: 'unknown' }, true)).toEqual([])
    expect(labelsWith([], {}, true)).toEqual([])
    expect(labelsWith([], { outcome: 'cancelled' }, true)).toEqual(['outcome:cancelled'])
  })

  it('adds none with auto-labels false, and keeps the user labels', () => {
    const facts: LabelFacts = { outcome: 'success', risk: ['ci'], issues: ['ENG-1'] }
    expect(labelsWith(['team:shop', ''], facts, false)).toEqual(['team:shop'])
  })

  it('adds no label the user gave, compared exactly', () => {
    const labels = labelsWith(
      ['risk:ci', 'Outcome:Success'],
      { outcome: 'success', risk: ['ci'] },
      true
    )
    expect(labels).toEqual(['risk:ci', 'Outcome:Success', 'outcome:success'])
  })

  it('labels at most MAX_ISSUE_LABELS issues: the first of the list, which triage gives newest first', () => {
    const issues = Array.from({ length: MAX_ISSUE_LABELS + 3 }, (_, i) => `ENG-${i + 1}`)
    const labels = labelsWith([], { issues }, true)
    expect(labels).toEqual(issues.slice(0, MAX_ISSUE_LABELS).map(key => `issue:${key}`))
  })

  it('adds at most MAX_ADDED_LABELS, outcome and remediation first', () => {
    const risk = Array.from({ length: MAX_ADDED_LABELS + 5 }, (_, i) => `r${i}`)
    const labels = labelsWith(['team:shop'], { outcome: 'success', remediation: 'fix', risk }, true)
    expect(labels).toHaveLength(1 + MAX_ADDED_LABELS)
    expect(labels.slice(0, 4)).toEqual([
      'team:shop',
      'outcome:success',
      'remediation:fix',
      'risk:r0'
    ])
  })

  it('makes each run of commas, line-breaking or invisible characters one "-", drops an empty value and cuts long ones', () => {
    const long = 'x'.repeat(MAX_LABEL_CHARS)
    const risk = ['db,\r\n\u2028schema', ' ', `a\u202eb`, 'c\u200b\u2060\ufeffd', long]
    const labels = labelsWith([], { risk }, true)
    expect(labels).toEqual([
      'risk:db-schema',
      'risk:a-b',
      'risk:c-d',
      `risk:${'x'.repeat(MAX_LABEL_CHARS - 'risk:'.length - 1)}…`
    ])
  })
})

describe('labelsWith (property)', () => {
  const SAFE_LABEL = /^[^,\p{Cc}\u2028\u2029]+$/u
  /** Names and keys made of what a label must not hold, mixed with letters, spaces and emoji. */
  const breaking = fc.string({
    unit: fc.constantFrom('a', ' ', ',', '\n', '\r', '\u0085', '\u2028', '\u2029', '\u202e', '😀')
  })
  const value = fc.oneof(hostileText, breaking)

  it('adds labels without commas or line breaks, each and all within their bounds', () => {
    const facts = fc.record(
      {
        outcome: fc.constantFrom('success', 'failure', 'cancelled', 'unknown' as const),
        remediation: fc.constantFrom('rollback', 'revert', 'hotfix', 'fix' as const),
        risk: fc.array(value, { maxLength: 40 }),
        issues: fc.array(value, { maxLength: 40 })
      },
      { requiredKeys: [] }
    )
    const userLabels = fc.array(fc.stringMatching(/^[a-z:]{1,12}$/), { maxLength: 5 })
    fc.assert(
      fc.property(userLabels, facts, (user, known) => {
        const labels = labelsWith(user, known, true)
        const added = labels.slice(new Set(user).size)
        expect(added.length).toBeLessThanOrEqual(MAX_ADDED_LABELS)
        for (const label of added) {
          expect(label).toMatch(SAFE_LABEL)
          expect(Array.from(label).length).toBeLessThanOrEqual(MAX_LABEL_CHARS)
        }
        expect(new Set(labels).size).toBe(labels.length)
      }),
      { numRuns: NUM_RUNS }
    )
  })
})

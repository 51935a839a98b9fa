import { describe, expect, it } from '@jest/globals'
import { MAX_SCANNED_CHARS_PER_TEXT } from '../../src/triage/issue-keys.ts'
import {
  MAX_REVERTED_SUBJECT_CHARS,
  MAX_REVERTS,
  remediationOf,
  type RemediationInput
} from '../../src/triage/remediation.ts'
import { runWithin } from '../../src/helpers/time-bound.ts'

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

  it('reads a revert from a subject or a title in every wording, after a type, a key or a tag', () => {
    const subjects = [
      'Revert "Add login"',
      'revert the retry change',
      'REVERT: the cache',
      'Reverting the cache',
      'fix: Revert "feat(api): add rate limits"',
      'fix(api)!: roll back the session store change',
      'revert: feat(auth): add passkeys',
      'ENG-12: Revert the fetch session cache',
      'ENG-12 Revert the fetch session cache',
      '[billing] Revert the rounding change',
      'DEV: [api] ENG-3: revert it',
      'Back out "CLIN-233: cache the schedule view"',
      'pkg/cache: Backed out the resync change',
      'Rolled back the resync change',
      'Partially revert the cache resize',
      'Undo the CSP header change',
      'undo "Add login"'
    ]
    for (const subject of subjects) {
      expect([subject, remediation({ messages: [`${subject}\n\nBody.`] })?.type]).toEqual([
        subject,
        'revert'
      ])
      const pullRequests = [{ number: 7, title: subject }]
      expect([subject, remediation({ pullRequests })?.type]).toEqual([subject, 'revert'])
    }
  })

  it('reads a revert behind a closing word and an issue, or an issue key', () => {
    for (const subject of [
      'Fixes #21955: Revert errant docs addition',
      'closes #7 revert the docs addition',
      '#21955: Revert errant docs addition',
      'DOCS-12: Revert the docs addition'
    ]) {
      expect([subject, remediation({ messages: [subject] })]).toEqual([
        subject,
        { type: 'revert', reverts: [] }
      ])
    }
  })

  it('cancels a revert whose reverted commit ships in the same deploy, by its SHA or its quoted subject', () => {
    const added = { sha: SHA, message: 'Add login' }
    const revert = (line: string) => `Revert "Add login"\n\nThis reverts commit ${line}.`
    const commits = [added, { sha: '1'.repeat(40), message: 'Revert "Add login"' }]
    for (const named of [SHA, SHA.slice(0, 7).toUpperCase()]) {
      const messages = ['Add login', revert(named)]
      expect([named, remediation({ messages, commits })]).toEqual([named, undefined])
    }
    // Named by its subject only, as a title or a message quotes it.
    const subjectOnly = ['Add   login\n\nThe form.', 'Revert "Add login"']
    expect(remediation({ messages: subjectOnly })).toBeUndefined()
    const title = [{ number: 45, title: 'Revert "Add login"' }]
    expect(remediation({ messages: ['Add login (#41)'], pullRequests: title })).toEqual({
      type: 'revert',
      reverts: ['"Add login"']
    })
    expect(
      remediation({
        messages: ['Add login'],
        pullRequests: [{ number: 41, title: 'Add login' }, ...title]
      })
    ).toBeUndefined()
  })

  it('counts a revert whose reverted commit is not in the deploy, whatever the subjects say', () => {
    const other = '0123456789abcdef0123456789abcdef01234567'
    const commits = [{ sha: other, message: 'Add login' }]
    // A shallow clone: the SHA is unknown here, and a later commit of the same subject is another.
    const messages = ['Add login', `Revert "Add login"\n\nThis reverts commit ${SHA}.`]
    expect(remediation({ messages, commits })).toEqual({ type: 'revert', reverts: [SHA] })
    expect(remediation({ messages: [messages[1]] })).toEqual({ type: 'revert', reverts: [SHA] })
    // Of two reverts, the one of a shipped commit gives way and the other stays.
    const both = [`Revert "Fix cart"\n\nThis reverts commit ${other}.`, messages[1]]
    expect(remediation({ messages: both, commits })).toEqual({ type: 'revert', reverts: [SHA] })
  })

  it("reads no revert a squash merge lists beside the branch's commit it reverts", () => {
    const squash = [
      'Add login (#41)',
      '',
      '* Add the login form',
      '',
      '* Revert "Add the login form"',
      '',
      `This reverts commit ${SHA}.`,
      '',
      '* Add the login form with a captcha'
    ].join('\n')
    expect(remediation({ messages: [squash] })).toBeUndefined()
    // A revert of a commit the branch does not list reverts what was merged before.
    const reverting = squash.replace('* Add the login form\n', '* Add the captcha\n')
    expect(remediation({ messages: [reverting] })).toEqual({ type: 'revert', reverts: [SHA] })
  })

  it('reads no revert from words about reverts that revert nothing', () => {
    const subjects = [
      'Add a Revert button to the order admin',
      'Handle reverted payments in the refund job',
      'Rollback support for the product importer',
      'feat(previews): add a rollback button',
      'fix(editor): undo stack grows without bound',
      'Undo: keep the selection after paste',
      'Reverse the sort order',
      'Revertible transfers',
      'Backout plan for the migration',
      'Add login\n\nRevert this if the error rate grows; it reverts nothing else.'
    ]
    for (const subject of subjects) {
      expect([subject, remediation({ messages: [subject] })]).toEqual([subject, undefined])
    }
  })

  it('names what is reverted: commits, pull requests, or else the quoted subject', () => {
    const messages = [
      `Revert "Add login"\n\nThis reverts commit ${SHA}.`,
      'revert the retry change\n\nThis reverts #5102. And this reverts parts of #1238.',
      'FIX: Revert "Allow guests" (#5195)\n\nReverts acme/shop#5188',
      'Revert "Add a cache (#41)" (#45)',
      'Revert "Add a cart"',
      'Revert #77',
      'Revert 1234ABCD',
      'revert the flag change'
    ]
    expect(remediation({ messages })).toEqual({
      type: 'revert',
      reverts: [SHA, '#5102', '#1238', 'acme/shop#5188', '#41', '"Add a cart"', '#77', '1234abcd']
    })
  })

  it('reads titles before messages, and names what a title names', () => {
    const pullRequests = [
      { number: 41, title: 'Revert "Add login"' },
      { number: 42, title: 'revert "Fix cart (#12)"' },
      { number: 43, title: 'Revert the cart change' }
    ]
    expect(remediation({ messages: [`This reverts commit ${SHA}.`], pullRequests })).toEqual({
      type: 'revert',
      reverts: ['"Add login"', '#12', SHA]
    })
    expect(remediation({ pullRequests: [pullRequests[2]] })).toEqual({
      type: 'revert',
      reverts: []
    })
  })

  it('names a reverted subject by its first characters', () => {
    const long = 'a'.repeat(MAX_REVERTED_SUBJECT_CHARS + 10)
    const found = remediation({ messages: [`Revert "${long}"`] })
    expect(found).toEqual({
      type: 'revert',
      reverts: [`"${'a'.repeat(MAX_REVERTED_SUBJECT_CHARS - 1)}…"`]
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

  it('reads a hotfix from the branch, a pull request title or a commit subject, in any case', () => {
    for (const branch of ['hotfix/login', 'HOTFIX-42']) {
      expect(remediation({ branch })).toEqual({ type: 'hotfix' })
    }
    const subjects = [
      'Hotfix: login',
      '[HOTFIX] login',
      'hotfixes for login',
      'HOTFIX: fix the build',
      'fix(api): hotfix for the login',
      'ENG-12 [hotfix] login',
      'Merge pull request #5150 from acme/hotfix/checkout-nil-coupon',
      "Merge branch 'hotfix/2.3.1'"
    ]
    for (const subject of subjects) {
      expect([subject, remediation({ pullRequests: [{ number: 1, title: subject }] })]).toEqual([
        subject,
        { type: 'hotfix' }
      ])
      expect([subject, remediation({ messages: [`${subject}\n\nBody.`] })]).toEqual([
        subject,
        { type: 'hotfix' }
      ])
    }
    for (const branch of ['hotfix', 'fix/hotfix-login', 'hotfixes']) {
      expect(remediation({ branch })).toBeUndefined()
    }
    for (const message of [
      'docs: describe the hotfix process',
      'Merge pull request #5 from acme/docs-hotfix',
      'Add login\n\nHOTFIX: not a subject'
    ]) {
      expect([message, remediation({ messages: [message] })]).toEqual([message, undefined])
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
      messages: [
        huge('This reverts commit '),
        huge('This reverts commit a'),
        huge('a'),
        huge('This reverts parts of a/'),
        huge('This reverts a.b/c'),
        huge('fix: '),
        huge('[a] '),
        huge('ENG-1 '),
        `Merge pull request #1 from ${huge('a')}`
      ],
      pullRequests: [
        { number: 1, title: `${huge(' ')}x` },
        { number: 2, title: huge('fix(') }
      ],
      branch: huge('hotfix')
    }
    expect(runWithin(MARGIN_MS, () => remediation(input))).toEqual({
      finished: true,
      value: undefined
    })
    const reverts = { messages: [`x: Revert "${huge('"')}`, huge('Revert ')] }
    expect(runWithin(MARGIN_MS, () => remediation(reverts)?.type)).toEqual({
      finished: true,
      value: 'revert'
    })
  })
})

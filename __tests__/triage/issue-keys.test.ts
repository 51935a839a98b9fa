import { describe, expect, it } from '@jest/globals'
import {
  MAX_ISSUE_KEY_PREFIXES,
  MAX_SCANNED_CHARS,
  MAX_SCANNED_CHARS_PER_TEXT,
  closedIssuesIn,
  issueKeysIn,
  parseIssueKeyMode,
  scannedTexts
} from '../../src/triage/issue-keys.ts'
import { runWithin } from '../../src/helpers/time-bound.ts'

const SERVER = 'https://github.com'
const REPO = 'acme/shop'

function keys(text: string, mode: Parameters<typeof issueKeysIn>[1] = 'auto'): string[] {
  return issueKeysIn([text], mode)
}

function closes(...texts: string[]): string[] {
  return closedIssuesIn(texts, REPO, SERVER)
}

describe('issueKeysIn', () => {
  it('finds keys uppercase and distinct, in order of first appearance', () => {
    const texts = [
      'feature/ENG-142-login',
      'Add login (ENG-142)',
      'Fix cart\n\nRefs OPS-7, see https://acme.atlassian.net/browse/WEB2-19 and ENG-142.'
    ]
    expect(issueKeysIn(texts, 'auto')).toEqual(['ENG-142', 'OPS-7', 'WEB2-19'])
  })

  it("reads any key on a text's first line: a branch, a title, a commit's subject", () => {
    const texts = [
      'lea/WEB-460-search-filters',
      'feat(search): filter by availability [WEB-461], after OPS-7',
      'Merge pull request #41 from acme/ENG-12-login\n\nAdd login'
    ]
    expect(issueKeysIn(texts, 'auto')).toEqual(['WEB-460', 'WEB-461', 'OPS-7', 'ENG-12'])
  })

  it('reads from a body only the keys it names: at a line start, after a closing or referring word, in a tracker trailer or URL', () => {
    const body = [
      'ENG-1: the form',
      '  * ENG-2 the button',
      '- [ENG-3] the tests',
      'Fixes ENG-4, ENG-5 and ENG-6',
      'This closes: ENG-7; resolved ENG-8. Part of ENG-9, refs ENG-10 & ENG-11.',
      'Implements ENG-12, related to ENG-13.',
      'Jira: ENG-14',
      'Issue: ENG-15',
      'Linear: ENG-16',
      'Tracked in https://acme.atlassian.net/browse/ENG-17.',
      'Design: https://linear.app/acme/issue/ENG-18/search-design',
      'Board: https://acme.atlassian.net/jira/software/projects/ENG/boards/1?selectedIssue=ENG-19'
    ].join('\n')
    expect(keys(`Add login\n\n${body}`)).toEqual(
      Array.from({ length: 19 }, (_, i) => `ENG-${i + 1}`)
    )
  })

  it('reads no key that a body only mentions, nor one in a trailer naming a person, an e-mail address or another URL', () => {
    const body = [
      'This fixes a regression we introduced in ENG-1, as ENG-2 showed.',
      'Signed-off-by: ENG-3 Bot <bot@acme.io>',
      'Co-authored-by: QA-4 Nightly <qa-4@acme.io>',
      'Reviewed-by: Ana <ENG-5@acme.io>',
      'Acked-by: ENG-6',
      'Reported-by: ENG-7',
      'Reviewers: ENG-8 Team',
      'Nightly: https://ci.acme.io/job/ENG-9/console',
      'ENG-10@acme.io wrote the plan; ENG-11.md holds it.',
      'prefix ENG-12, hotfixes ENG-13'
    ].join('\n')
    expect(keys(`OPS-1 Add login\n\n${body}`)).toEqual(['OPS-1'])
    expect(keys(`ENG-3 Add login\n\nSigned-off-by: ENG-3 Bot <bot@acme.io>`)).toEqual(['ENG-3'])
    expect(keys('Mail ENG-14@acme.io, read https://wiki.acme.io/ENG-15 or docs/ENG-16.md')).toEqual(
      []
    )
  })

  it('reads a key as a whole word: a project part of 2 to 10 characters, a number of 1 to 9 digits not starting with 0', () => {
    expect(
      keys('AB-1 ABCDEFGHIJ-123456789 X-509 ABCDEFGHIJK-1 ENG-0 ENG-012 ENG-1234567890')
    ).toEqual(['AB-1', 'ABCDEFGHIJ-123456789'])
    expect(keys('xENG-1 ENG-1x 1ENG-2 ENG-3a ENG-4_ (ENG-5)')).toEqual(['ENG-4', 'ENG-5'])
  })

  it("reads no hyphenated word's tail nor a standard's number after a standards body, unless the deploy writes the prefix as a key elsewhere", () => {
    const weak = [
      'docs-i18n/ko-KR-1',
      'Translate the ja-JP-1 strings',
      'feature-ENG-123',
      'Support NEMA L22-20 outlets',
      'Follow ISO AB-2, IEC CD-3, IEEE EF-4, ANSI C63-4 and DIN EN-60204'
    ]
    expect(issueKeysIn(weak, 'auto')).toEqual([])
    // The prefix written as a key: at a subject's start, in a branch, in brackets, after a closing word.
    const written = [
      'KR-7: Fix the Korean plural forms',
      'feature/ENG-124-login',
      'Add outlet types [L22-5]',
      'Add the cart\n\nCloses C63-9'
    ]
    expect(issueKeysIn([...weak, ...written], 'auto')).toEqual([
      'KR-1',
      'ENG-123',
      'L22-20',
      'C63-4',
      'KR-7',
      'ENG-124',
      'L22-5',
      'C63-9'
    ])
    // A mention in a subject's prose is no such writing; a listed prefix is a key anywhere.
    expect(issueKeysIn(['feature-ENG-123', 'Add login for ENG-9 users'], 'auto')).toEqual(['ENG-9'])
    expect(keys('feature-ENG-123', { prefixes: ['ENG'] })).toEqual(['ENG-123'])
  })

  it('reads a bracketed key at a subject start in any case when its prefix is in capitals elsewhere, in capitals', () => {
    const subjects = ['[web-599] Fix the search box', 'Add login (WEB-600)']
    expect(issueKeysIn(subjects, 'auto')).toEqual(['WEB-599', 'WEB-600'])
    expect(keys('[web-599] Fix the search box')).toEqual([])
    expect(issueKeysIn(['Fix [web-599] the box', 'WEB-600 Add login'], 'auto')).toEqual(['WEB-600'])
  })

  it('reads only capitals in auto mode: lowercase words with numbers are prose and tool names', () => {
    expect(keys('renovate/node-20 covid-19 eng-142 Eng-143')).toEqual([])
  })

  it('skips standards, proposals, ciphers, advisories, GitHub references and OpenJDK bugs in auto mode', () => {
    const text =
      'UTF-8 UTF-16 UCS-2 SHA-1 SHA-256 SHA-512 ISO-8601 RFC-9110 CVE-2024-3094 CWE-79 ' +
      'GHSA-1234-abcd-efgh AES-256 RSA-2048 GH-12 KIP-512 PEP-8 JEP-442 JSR-310 FLIP-27 ' +
      'KEP-3325 HIP-16 JDK-8123456 GO-2024-2824 ENG-1'
    expect(keys(text)).toEqual(['ENG-1'])
    expect(keys('Work around JDK-8322477\n\nFixes KIP-966\nPEP-8: naming')).toEqual([])
  })

  it('reads a listed prefix always, a proposal or a standard included', () => {
    const mode = { prefixes: ['KIP', 'ENG'] }
    expect(keys('Implement KIP-512 and PEP-8\n\nPart of kip-500', mode)).toEqual([
      'KIP-512',
      'KIP-500'
    ])
  })

  it('accepts only the listed prefixes, in any letter case, stop list aside', () => {
    const mode = { prefixes: ['ENG', 'SHA'] }
    expect(keys('user/eng-142-login OPS-1 Eng-7 SHA-256', mode)).toEqual([
      'ENG-142',
      'ENG-7',
      'SHA-256'
    ])
  })

  it('finds none with none', () => {
    expect(keys('ENG-142', 'none')).toEqual([])
  })
})

describe('parseIssueKeyMode', () => {
  it('reads auto (also when empty), none and prefixes separated by commas or spaces', () => {
    expect(parseIssueKeyMode('')).toBe('auto')
    expect(parseIssueKeyMode(' Auto ')).toBe('auto')
    expect(parseIssueKeyMode('NONE')).toBe('none')
    expect(parseIssueKeyMode('eng, OPS\nweb2 ENG')).toEqual({ prefixes: ['ENG', 'OPS', 'WEB2'] })
  })

  it('refuses what is not a prefix, and too many prefixes', () => {
    for (const raw of ['E', '1ENG', 'ENG-1', 'ENG_OPS', 'ABCDEFGHIJK', 'ENG OPS!']) {
      expect(parseIssueKeyMode(raw)).toBeUndefined()
    }
    const prefixes = (count: number) => Array.from({ length: count }, (_, i) => `P${i}`).join(',')
    expect(parseIssueKeyMode(prefixes(MAX_ISSUE_KEY_PREFIXES))).toBeDefined()
    expect(parseIssueKeyMode(prefixes(MAX_ISSUE_KEY_PREFIXES + 1))).toBeUndefined()
  })
})

describe('closedIssuesIn', () => {
  it('reads every closing keyword, in any case, with a colon or spaces', () => {
    const text = [
      'close #1',
      'Closes #2',
      'closed: #3',
      'FIX #4',
      'fixes:#5',
      'Fixed  #6',
      'resolve #7',
      'Resolves:\t#8',
      'resolved #9'
    ].join('\n')
    expect(closes(text)).toEqual(['#1', '#2', '#3', '#4', '#5', '#6', '#7', '#8', '#9'])
  })

  it('names other repositories as owner/repo#N and this one as #N, by reference or by URL on the server', () => {
    expect(
      closes(
        'Fixes acme/api#7 and fixes Acme/Shop#8',
        `Resolves ${SERVER}/acme/api/issues/9, closes ${SERVER}/acme/shop/issues/10`
      )
    ).toEqual(['acme/api#7', '#8', 'acme/api#9', '#10'])
  })

  it('reads issue URLs on a GitHub Enterprise Server', () => {
    const server = 'https://git.example.com/'
    const text =
      'Fixes https://git.example.com/acme/api/issues/3, fixes https://github.com/a/b/issues/4'
    expect(closedIssuesIn([text], REPO, server)).toEqual(['acme/api#3'])
  })

  it('ignores words that only contain a keyword, references without a keyword, pull URLs and the number 0', () => {
    const text =
      'prefixes #1, fixing #2, see #3, Fixes #0, fixes #4a, fixes #12345678901, ' +
      `fixes ${SERVER}/acme/shop/pull/5, fixes#6`
    expect(closes(text)).toEqual([])
  })

  it('reads no reference whose repository or owner is "." or "..", which GitHub never names', () => {
    const text =
      'Fixes evil/..#3, closes acme/.#4, fixes ../api#5, fixes ./api#6, ' +
      `resolves ${SERVER}/evil/../issues/7, fixes ${SERVER}/../api/issues/8, fixes acme/.api#9`
    expect(closes(text)).toEqual(['acme/.api#9'])
  })

  it("reads GitLab's keywords before a list of issues, in other projects and by URL on the same server", () => {
    const server = 'https://gitlab.example.com'
    const texts = [
      'Add login\n\nCloses #1, #2, and #3',
      'Fix cart\n\nImplementing #4, #5 and group/other#22; fixes group/sub/other#23 #6',
      `Resolves ${server}/acme/shop/-/work_items/7 and ${server}/acme/api/-/issues/8`,
      'closes https://gitlab.com/acme/shop/-/work_items/9, resolving #10'
    ]
    expect(closedIssuesIn(texts, REPO, server, true)).toEqual([
      '#1',
      '#2',
      '#3',
      '#4',
      '#5',
      'group/other#22',
      'group/sub/other#23',
      '#6',
      '#7',
      'acme/api#8',
      '#10'
    ])
    // GitHub closes one issue a keyword.
    expect(closes('Closes #1, #2, and #3, implements #4')).toEqual(['#1'])
  })

  it('lists each issue once, letter case aside', () => {
    expect(closes('Fixes #1, closes #1', 'fixes acme/api#2', 'fixes ACME/API#2')).toEqual([
      '#1',
      'acme/api#2'
    ])
  })
})

describe('scannedTexts', () => {
  it('reads each text up to its bound and skips absent ones', () => {
    const long = `${' x'.repeat(MAX_SCANNED_CHARS_PER_TEXT)}ENG-1`
    const scanned = scannedTexts([undefined, long, 'ENG-2'])
    expect(scanned.map(text => text.length)).toEqual([MAX_SCANNED_CHARS_PER_TEXT, 5])
    expect(issueKeysIn(scanned, 'auto')).toEqual(['ENG-2'])
  })

  it('reads all the texts together up to their bound, in the order given', () => {
    const text = 'x '.repeat(MAX_SCANNED_CHARS_PER_TEXT / 2)
    const count = MAX_SCANNED_CHARS / MAX_SCANNED_CHARS_PER_TEXT
    const scanned = scannedTexts([...Array.from({ length: count }, () => text), 'ENG-1'])
    expect(scanned.reduce((sum, t) => sum + t.length, 0)).toBe(MAX_SCANNED_CHARS)
    expect(issueKeysIn(scanned, 'auto')).toEqual([])
  })

  it('never leaves part of a word at a cut, so that a cut key is not read as another', () => {
    const text = `${'x'.repeat(MAX_SCANNED_CHARS_PER_TEXT - 5)} ENG-142`
    const [scanned] = scannedTexts([text])
    expect(scanned.endsWith(' ENG')).toBe(true)
    expect(issueKeysIn([scanned], 'auto')).toEqual([])
  })
})

describe('hostile texts', () => {
  /**
   * Each pattern's work grows with the text, never with its square: a quarter of a megabyte takes
   * milliseconds to scan once, and hours to scan again from each of its positions.
   */
  const LONG = 1 << 18
  /** Far above a linear scan of a few such texts, far below a backtracking one. */
  const MARGIN_MS = 10_000
  const fill = (unit: string, tail = ''): string =>
    unit.repeat(Math.ceil(LONG / unit.length)) + tail

  it('are read for keys in linear time', () => {
    const texts = [
      fill('A'),
      fill('AB-'),
      fill('AB-1'),
      fill('ABCDEFGHIJ-1234'),
      fill('-1'),
      fill('AB-12345678', ' ENG-1'),
      fill('a-AB-1 '),
      fill('NEMA AB-1 '),
      fill('[ab-1] '),
      fill('(AB-'),
      fill('/AB-1/')
    ]
    for (const mode of ['auto', { prefixes: ['AB'] }] as const) {
      const found = runWithin(MARGIN_MS, () => issueKeysIn(texts, mode))
      // AB is written as a key (`/AB-1/`), so its weak and bracketed keys count too.
      expect(found).toEqual({
        finished: true,
        value: mode === 'auto' ? ['ENG-1', 'AB-1'] : ['AB-1']
      })
    }
  })

  it('are read for the keys a body names in linear time', () => {
    const bodies = [
      fill('Fixes '),
      fill('Fixes AB-'),
      fill('Fixes AB-1, '),
      fill('Fixes AB-1 and '),
      fill('Jira: '),
      fill('\n- ['),
      fill('\n  * AB-'),
      fill('a@'),
      fill('a.'),
      fill('https://a/browse/'),
      fill('https://a/browse/AB-1'),
      fill('part of '),
      fill('x', ' ENG-1 ENG-2')
    ].map(body => `Subject\n${body}`)
    const found = runWithin(MARGIN_MS, () => issueKeysIn(bodies, 'auto'))
    expect(found).toEqual({ finished: true, value: ['AB-1'] })
  })

  it('are read for closing references in linear time', () => {
    const texts = [
      fill('fixes '),
      fill('fixes:'),
      fill('fixes #'),
      fill('fixes a'),
      fill('fixes a/'),
      fill(`fixes ${'a'.repeat(40)}/b#1`),
      fill(`fixes ${SERVER}/a/`),
      fill(`fixes ${SERVER}/a/b/issues/`),
      fill('fixes #1 ')
    ]
    const found = runWithin(MARGIN_MS, () => closedIssuesIn(texts, REPO, SERVER))
    expect(found).toEqual({ finished: true, value: ['#1'] })
    const lists = [
      ...texts,
      fill('closes #1, '),
      fill('closes #1 and '),
      fill('closes a/b#1  ,  '),
      fill(`closes ${SERVER}/a/b/-/work_items/1 `),
      fill('closes a/b/c/d/')
    ]
    const gitlab = runWithin(MARGIN_MS, () => closedIssuesIn(lists, REPO, SERVER, true))
    expect(gitlab).toEqual({ finished: true, value: ['#1', 'a/b#1'] })
  })
})

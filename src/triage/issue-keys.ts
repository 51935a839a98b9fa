/**
 * Issue keys (`ENG-142`, as Jira and Linear write them) and the GitHub issues a change closes,
 * read from the texts a lookup already has. Every regular expression here has a fixed start and
 * bounded repeats, so it scans a text in linear time whatever the text; the texts are bounded too.
 */
import type { IssueKeyMode } from '../settings.ts'

/** Each text (a branch, a title, a commit message) is read this far. */
export const MAX_SCANNED_CHARS_PER_TEXT = 16 * 1024
/** All the texts of one change together are read this far, in the order given. */
export const MAX_SCANNED_CHARS = 256 * 1024
/** Listed project prefixes of the `issue-keys` input. */
export const MAX_ISSUE_KEY_PREFIXES = 50

/**
 * Project parts that look like keys but number standards, proposals, ciphers and advisories, or
 * name GitHub's own references and OpenJDK's tracker, which JVM projects cite (UTF-8, ISO-8601,
 * RFC-9110, PEP-8, KIP-512, JEP-442, KEP-3325, CVE-2024-1234, GO-2024-2824, GH-12, JDK-8123456):
 * never a key in auto mode, whatever the number. A listed prefix is always accepted.
 */
export const NOT_ISSUE_PREFIXES: readonly string[] = (
  'ADR AES AIP BIP CVE CWE ECMA EIP ERC FIPS FLIP GEP GH GHSA GO HIP IEC IEEE ISO JDK JEP JSR KEP ' +
  'KIP NEP PEP PYSEC RFC RSA RUSTSEC SHA SPIP TEP UCS UTF XEP'
).split(' ')

/**
 * A key: a project part of a letter and 1 to 9 letters or digits, "-", and an issue number of 1
 * to 9 digits that does not start with 0; not inside a longer word or number, nor a file name or
 * an e-mail address (`ENG-1.md`, `ENG-1@acme.io`). Matched in any case; auto mode keeps capitals.
 */
const KEY =
  '(?<![A-Za-z0-9@.])[A-Za-z][A-Za-z0-9]{1,9}-[1-9][0-9]{0,8}(?![A-Za-z0-9@]|\\.[A-Za-z0-9])'
const PREFIX = /^[A-Z][A-Z0-9]{1,9}$/i
const ANY_KEY = new RegExp(KEY, 'gi')
/** Up to ten keys in a row: `ENG-1, ENG-2 and ENG-3`. */
const KEY_LIST = `${KEY}(?:(?:[ \\t]{0,4}(?:,|&|and|/)[ \\t]{0,4}|[ \\t]{1,4})${KEY}){0,9}`
/** A URL (group 1) or an e-mail address, each read whole, so that no key is read inside one. */
const WHOLE = '(https?://[^\\s<>"]*)|(?<![\\w.%+-])[\\w.%+-]{1,64}@[\\w.-]+'
/** A branch, a title or a subject: any key (group 2). */
const ANYWHERE = new RegExp(`${WHOLE}|(${KEY})`, 'gi')
/** A line's start, a bullet or a bracket aside: `ENG-1 …`, `* ENG-1 …`, `[ENG-1] …`. */
const LINE_START = '^[ \\t]{0,8}(?:[-*+][ \\t]{1,4})?\\[?'
/** `Fixes ENG-1`, `Part of: ENG-1`, `Jira: ENG-1`; not inside a word or a trailer's name. */
const REFERRING =
  '(?<![A-Za-z0-9-])(?:(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|references?|part of|' +
  'relate[sd] to|implements?)[ \\t]{0,4}:?|(?:jira|issues?|tickets?|linear|task|story|bug)' +
  '[ \\t]{0,4}:)[ \\t]{0,8}'
/**
 * A body gives only the keys it names (group 2): at a line's start, after a word that closes or
 * refers to an issue, or in a tracker's trailer; never in another trailer (`Signed-off-by: …`)
 * or in prose ("a regression we introduced in ENG-1234").
 */
const EXPLICIT = new RegExp(`${WHOLE}|(?:${LINE_START}|${REFERRING})(${KEY_LIST})`, 'gim')
/** A tracker's issue URL: Jira's /browse/ENG-1, Linear's and YouTrack's /issue/ENG-1. */
const TRACKER_URL = new RegExp(`(?:/(?:browse|issues?)/|[?&]selectedIssue=)(${KEY})`, 'i')

/** The `issue-keys` input: auto (also when empty), none, or prefixes split by commas or spaces. */
export function parseIssueKeyMode(raw: string): IssueKeyMode | undefined {
  const value = raw.trim().toUpperCase()
  if (value === '' || value === 'AUTO') return 'auto'
  if (value === 'NONE') return 'none'
  const prefixes = [...new Set(value.split(/[\s,]+/))].filter(Boolean)
  const valid = prefixes.length <= MAX_ISSUE_KEY_PREFIXES && prefixes.every(p => PREFIX.test(p))
  return valid ? { prefixes } : undefined
}

/**
 * The texts as far as they are read: each cut at MAX_SCANNED_CHARS_PER_TEXT, all together at
 * MAX_SCANNED_CHARS. A cut never leaves part of a word behind (`ENG-14` of `ENG-142`).
 */
export function scannedTexts(
  texts: readonly (string | undefined)[],
  budget = MAX_SCANNED_CHARS
): string[] {
  let left = budget
  const scanned: string[] = []
  for (const text of texts) {
    if (text === undefined || left === 0) continue
    let end = Math.min(text.length, MAX_SCANNED_CHARS_PER_TEXT, left)
    if (end < text.length) while (end > 0 && /[A-Za-z0-9]/.test(text[end])) end--
    scanned.push(text.slice(0, end))
    left -= end
  }
  return scanned
}

/**
 * Commit messages (oldest first) as far as they are read: each as any text, every subject (the
 * lookup bounds their number), and the bodies within MAX_SCANNED_CHARS, the newest first, so that
 * the commits nearest the deploy are never the ones left unread.
 */
export function scannedMessages(messages: readonly string[]): string[] {
  let left = MAX_SCANNED_CHARS
  const read = messages.toReversed().map(message => {
    const [text] = scannedTexts([message], Infinity)
    const [subject] = text.split('\n', 1)
    const [body = ''] = scannedTexts([text.slice(subject.length)], left)
    left -= body.length
    return subject + body
  })
  return read.reverse()
}

/**
 * Before a key (in the WEAK_WINDOW characters before it), what makes it a hyphenated word's tail
 * (`docs-i18n/ko-KR-1`, `feature-ENG-1`) or a standard's number after a standards body's name in
 * prose (`NEMA L22-20`): a key in auto mode only when the texts write its prefix as a key elsewhere.
 */
const WEAK_BEFORE = /[A-Za-z0-9]-$|(?<![A-Za-z0-9])(?:ANSI|DIN|EN|IEC|IEEE|ISO|NEMA) $/
/** The longest standards body's name, its space, and the character before it. */
const WEAK_WINDOW = 6
/**
 * Where a text writes a key as one (group 2): a line's start, a branch's folder (`feature/ENG-1`),
 * a bracket (`[ENG-1]`, `(ENG-1)`), or after a word that closes or refers to an issue.
 */
const AS_KEY = new RegExp(`${WHOLE}|(?:${LINE_START}|(?<=[/[(])|${REFERRING})(${KEY_LIST})`, 'gim')
/** `[web-599] Fix …`: a key in brackets at a subject's start, in any case (group 1). */
const BRACKETED = new RegExp(`^[ \\t]{0,8}\\[(${KEY})\\]`, 'i')

/**
 * How auto mode found a key: as a key; in a weak place (WEAK_BEFORE), kept when its prefix is
 * written as a key elsewhere (AS_KEY); or bracketed at a subject's start in another case, kept
 * when its prefix appears in capitals elsewhere.
 */
type Standing = 'key' | 'weak' | 'bracketed'

const prefixOf = (key: string): string => key.slice(0, key.indexOf('-')).toUpperCase()

/**
 * Every distinct key in the texts, uppercase, in order of first appearance: any key on a text's
 * first line (a branch, a title, a commit's subject), the explicit ones of the lines after it, and
 * in either the key of a tracker's issue URL; none in other URLs or in e-mail addresses.
 */
export function issueKeysIn(texts: readonly string[], mode: IssueKeyMode): string[] {
  if (mode === 'none') return []
  const found = new Map<string, Standing>()
  const note = (key: string, standing: Standing): void => {
    const upper = key.toUpperCase()
    const accepted =
      mode === 'auto'
        ? !NOT_ISSUE_PREFIXES.includes(prefixOf(key)) && (key === upper || standing === 'bracketed')
        : mode.prefixes.includes(prefixOf(key))
    // A listed prefix is a key wherever it is written.
    if (accepted && found.get(upper) !== 'key') found.set(upper, mode === 'auto' ? standing : 'key')
  }
  const read = (text: string, pattern: RegExp, firstLine: boolean): void => {
    for (const { 1: url, 2: plain, index } of text.matchAll(pattern)) {
      const named = url === undefined ? plain : TRACKER_URL.exec(url)?.[1]
      const before = text.slice(Math.max(0, index - WEAK_WINDOW), index)
      const weak = firstLine && plain !== undefined && WEAK_BEFORE.test(before)
      for (const [key] of named?.matchAll(ANY_KEY) ?? []) note(key, weak ? 'weak' : 'key')
    }
  }
  for (const text of texts) {
    const newline = text.indexOf('\n')
    const line = newline === -1 ? text : text.slice(0, newline)
    const bracketed = BRACKETED.exec(line)?.[1]
    if (bracketed !== undefined) note(bracketed, 'bracketed')
    read(line, ANYWHERE, true)
    if (newline !== -1) read(text.slice(newline + 1), EXPLICIT, false)
  }
  if (mode !== 'auto') return [...found.keys()]
  const written = new Set<string>()
  for (const text of texts) {
    for (const [, , list] of text.matchAll(AS_KEY)) {
      for (const [key] of list?.matchAll(ANY_KEY) ?? []) {
        if (key === key.toUpperCase()) written.add(prefixOf(key))
      }
    }
  }
  const plain = [...found].filter(([, standing]) => standing === 'key').map(([key]) => key)
  const capitals = new Set([...written, ...plain.map(prefixOf)])
  const kept = ([key, standing]: [string, Standing]): boolean =>
    standing === 'key' || (standing === 'weak' ? written : capitals).has(prefixOf(key))
  return [...found].filter(kept).map(([key]) => key)
}

/** GitHub's closing keywords (GitLab's add -ing and implement), any case, then a colon, spaces or both. */
const closingKeyword = (gitlab: boolean): string =>
  `(?<![A-Za-z0-9_])(?:${gitlab ? 'clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resol(?:ve[sd]?|ving)|implement(?:s|ed|ing)?' : 'close[sd]?|fix(?:e[sd])?|resolve[sd]?'})(?::[ \\t]{0,8}|[ \\t]{1,8})`
/** GitLab's owner is a group and its subgroups: `group/sub`. */
const GITLAB_OWNER = '([A-Za-z0-9_.-]{1,100}(?:/[A-Za-z0-9_.-]{1,100}){0,19})'
const OWNER = '([A-Za-z0-9-]{1,39})'
const REPO = '([A-Za-z0-9._-]{1,100})'
const NUMBER = '([1-9][0-9]{0,8})(?![A-Za-z0-9])'

/** Between two references after one GitLab keyword: `#1, #2 and #3`, `#1, #2, and #3`, `#1 #2`. */
const GITLAB_SEPARATOR = '(?:[ \\t]{0,4},?[ \\t]{1,4}and[ \\t]{1,4}|[ \\t]{0,4},?[ \\t]{0,4})'

/**
 * The issues the texts close, as GitHub reads closing keywords: `Fixes #12`, `closes:
 * acme/api#7`, `Resolves {serverUrl}/acme/api/issues/7`; on GitLab, up to twenty references after
 * one keyword, and the URLs of issues and work items (`…/-/issues/7`, `…/-/work_items/7`). Each as
 * `#N` in `repository` (owner/repo) or `owner/repo#N` elsewhere, distinct (letter case aside), in
 * order of first appearance.
 */
export function closedIssuesIn(
  texts: readonly string[],
  repository: string,
  serverUrl: string | undefined,
  gitlab = false
): string[] {
  // An issue's URL is read only on the run's own server, when it has one.
  const server = serverUrl?.replace(/\/$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const owner = gitlab ? GITLAB_OWNER : OWNER
  const issues = gitlab ? '-/(?:issues|work_items)' : 'issues'
  // Without a server, a branch that never matches keeps the groups' numbers.
  const url = server ? `|${server}/${owner}/${REPO}/${issues}/${NUMBER}` : '|(?!)()()()'
  const reference = `(?:#${NUMBER}|${owner}/${REPO}#${NUMBER}${url})`
  const list = gitlab ? `${reference}(?:${GITLAB_SEPARATOR}${reference}){0,19}` : reference
  const closing = new RegExp(`${closingKeyword(gitlab)}(${list})`, 'gi')
  const each = new RegExp(reference, 'gi')
  const closed = new Map<string, string>()
  for (const text of texts) {
    for (const [, references] of text.matchAll(closing)) {
      for (const match of references.matchAll(each)) {
        const [, local, owner, repo, number, urlOwner, urlRepo, urlNumber] = match
        const name = `${owner ?? urlOwner}/${repo ?? urlRepo}`
        // No host has a group or repository "." or "..": as a path it names another page.
        if (!local && name.split('/').some(part => /^\.\.?$/.test(part))) continue
        const n = local ?? number ?? urlNumber
        const ref =
          local || name.toLowerCase() === repository.toLowerCase() ? `#${n}` : `${name}#${n}`
        if (!closed.has(ref.toLowerCase())) closed.set(ref.toLowerCase(), ref)
      }
    }
  }
  return [...closed.values()]
}

/**
 * What a deploy remediates. One answer, by precedence: the fix the user names, then a rollback,
 * then a revert found in what shipped, then a hotfix by its branch, a title or a subject.
 */
import { collapseWhitespace, truncateText } from '../helpers/text.ts'
import { scannedMessages, scannedTexts } from './issue-keys.ts'

/** A revert lists at most this many reverted commits, pull requests and subjects. */
export const MAX_REVERTS = 20
/** A reverted subject is named by its first characters: enough to recognise it. */
export const MAX_REVERTED_SUBJECT_CHARS = 100

export type Remediation =
  /** The `remediates` input: the change id or version this deploy fixes. */
  | { type: 'fix'; of: string }
  /** The deploy is older than the previous one, whose SHA (or version) is `of`, when known. */
  | { type: 'rollback'; of?: string }
  /**
   * What is reverted, as the texts name it, in order: a commit's SHA (lowercase), a pull request
   * (`#N`, `owner/repo#N`) or a subject in quotes; empty when they name nothing.
   */
  | { type: 'revert'; reverts: string[] }
  | { type: 'hotfix' }

export interface RemediationInput {
  /** The `remediates` input, when given. */
  remediates?: string
  /** The previous deploy's SHA, when this deploy is a rollback. */
  rollbackOf?: string
  /** Full commit messages, every line, oldest first. */
  messages: readonly string[]
  pullRequests: readonly { number: number; title?: string }[]
  /** The pushed branch or the pull request's head branch, without refs/heads/. */
  branch?: string
  /** The shipped commits, by SHA: a revert of one of them ships with it, and the two cancel out. */
  commits?: readonly { sha: string }[]
}

/**
 * What may come before a subject's verb: conventional-commit types (`fix(api)!:`), Go's package
 * paths (`pkg/cache:`), issue keys and issues, after a closing word or not (`ENG-12:`, `Fixes
 * #21955:`), bracketed tags.
 */
const LEAD =
  '^[ \\t]{0,8}(?:(?:[a-z][\\w./-]{0,40}(?:\\([^)\\n]{0,60}\\))?!?:|' +
  '(?:(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)[ \\t]{1,4})?' +
  '(?:[a-z][a-z0-9]{1,9}-[1-9][0-9]{0,8}|#[1-9][0-9]{0,8}):?|\\[[^\\]\\n]{0,40}\\])[ \\t]{1,8}){0,3}'
/**
 * A subject or title that reverts, in any case: `Revert "…"`, `fix: revert the retry change`,
 * `ENG-12: Back out …`, `Roll back …`, `Partially revert …`; `Undo` only before what it undoes
 * (not `undo stack …`). Group 1: a quoted subject; group 2: a pull request or a commit's SHA.
 */
const REVERT_SUBJECT = new RegExp(
  `${LEAD}(?:partial(?:ly)?[ \\t]{1,4})?(?:revert(?:s|ed|ing)?|back(?:s|ed|ing)?[ -]out|` +
    `roll(?:s|ed|ing)?[ -]back|undo(?:es|ne|ing)?(?= (?:["'#]|the |this |that |commit|change)))` +
    '(?![a-z0-9])(?:[ \\t]{1,8}(?:"(.*)"|(#[1-9][0-9]{0,8}|[0-9a-f]{7,40})(?![a-z0-9])))?',
  'i'
)
/** A pull request at the end of a quoted subject, as a squash merge writes it: `Add login (#41)`. */
const SQUASHED = /\((#[1-9][0-9]{0,8})\)$/
/**
 * On any line: `This reverts commit <sha>` (as git writes it), `This reverts #12`, `This reverts
 * parts of #12`, `Reverts owner/repo#12` (as GitHub's Revert button writes it). Group 1: a SHA;
 * group 2: a pull request.
 */
const REVERTED = new RegExp(
  '(?<![A-Za-z0-9])reverts (?:parts? of |some of )?(?:commits? ([0-9a-f]{7,40})|' +
    '((?:[\\w.-]{1,100}/[\\w.-]{1,100})?#[1-9][0-9]{0,8}))(?![A-Za-z0-9])',
  'gi'
)
/**
 * A text as closing references read it: a revert undoes what its quoted subject and its "This
 * reverts commit" body name, and closes none of it.
 */
export function unrevertedText(text: string): string {
  const [subject] = text.split('\n', 1)
  const body = /this reverts commit/i.test(text) ? '' : text.slice(subject.length)
  const quoted = REVERT_SUBJECT.exec(subject)?.[1]
  return (quoted === undefined ? subject : subject.replace(`"${quoted}"`, '')) + body
}

const HOTFIX_BRANCH = /^hotfix[/-]/i
/** `HOTFIX: …`, `[hotfix] …`, also after a type, key or tag; or the merge of a hotfix branch. */
const HOTFIX_SUBJECT = new RegExp(
  `${LEAD}(?:\\[hotfix\\]|hotfix|merge (?:pull request #[0-9]{1,9} from [\\w.-]{1,100}/|` +
    "branch ')hotfix[/-])",
  'i'
)

/**
 * Pull request titles and commit messages are read alike: a subject (the first line) that
 * reverts, or any line that names what is reverted; what the lines name, else the subject. A
 * revert of what ships with it is none (see cancelsOut), nor one inside a squash's branch.
 */
export function remediationOf(input: RemediationInput): Remediation | undefined {
  const remediates = input.remediates?.trim()
  if (remediates) return { type: 'fix', of: remediates }
  if (input.rollbackOf) return { type: 'rollback', of: input.rollbackOf }
  const titles = scannedTexts(input.pullRequests.map(pull => pull.title))
  const texts = [...titles, ...scannedMessages(input.messages)].map(withoutBranchReverts)
  const subjects = texts.map(text => text.split('\n', 1)[0])
  const shipped: ShippedNames = {
    shas: (input.commits ?? []).map(commit => commit.sha.toLowerCase()),
    subjects: new Set(subjects.map(collapseWhitespace))
  }
  const reverts = new Set<string>()
  let reverted = false
  for (const [index, text] of texts.entries()) {
    const head = REVERT_SUBJECT.exec(subjects[index])
    const named = [...text.matchAll(REVERTED)].map(([, sha, pull]) => sha?.toLowerCase() ?? pull)
    if (head === null && named.length === 0) continue
    const [, quoted = '', ref] = head ?? []
    if (cancelsOut([...named, ref?.toLowerCase() ?? ''], quoted, shipped)) continue
    reverted = true
    const subject = quoted && `"${truncateText(quoted, MAX_REVERTED_SUBJECT_CHARS)}"`
    const name = ref?.toLowerCase() ?? SQUASHED.exec(quoted)?.[1] ?? subject
    for (const each of named.length > 0 ? named : [name]) if (each) reverts.add(each)
  }
  if (reverted) return { type: 'revert', reverts: [...reverts].slice(0, MAX_REVERTS) }
  const hotfix = subjects.some(subject => HOTFIX_SUBJECT.test(subject))
  return HOTFIX_BRANCH.test(input.branch ?? '') || hotfix ? { type: 'hotfix' } : undefined
}

/** What ships: each commit's full SHA, and every subject and title read (whitespace collapsed). */
type ShippedNames = { shas: string[]; subjects: Set<string> }

/**
 * Whether a revert undoes what ships with it, so that the two cancel out: the SHAs it names are
 * all shipped ones (a short SHA by its start); or, when it names none, its quoted subject is a
 * shipped commit's subject or a pull request's title. A commit not read here (past a shallow
 * clone's history, say) is unknown, and its revert counts.
 */
function cancelsOut(reverted: string[], quoted: string, shipped: ShippedNames): boolean {
  const shas = reverted.filter(name => /^[0-9a-f]{7,40}$/.test(name))
  if (shas.length > 0) return shas.every(sha => shipped.shas.some(full => full.startsWith(sha)))
  return quoted !== '' && shipped.subjects.has(collapseWhitespace(quoted))
}

/**
 * A text without the reverts a squash merge's body lists beside what they revert (`* Revert
 * "X"` and `* X`, each listed commit's body after its line, as GitHub and GitLab write them):
 * both happened on the branch before the merge.
 */
function withoutBranchReverts(text: string): string {
  const [head, ...listed] = text.split(/\n(?=\* )/)
  const subjectOf = (commit: string): string =>
    collapseWhitespace(commit.split('\n', 1)[0].slice(2))
  const subjects = new Set(listed.map(subjectOf))
  const kept = listed.filter(commit => {
    const quoted = REVERT_SUBJECT.exec(subjectOf(commit))?.[1]
    return quoted === undefined || !subjects.has(collapseWhitespace(quoted))
  })
  return [head, ...kept].join('\n')
}

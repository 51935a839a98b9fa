/**
 * What a deploy remediates. One answer, by precedence: the fix the user names, then a rollback,
 * then a revert found in what shipped, then a hotfix by its branch or title.
 */
import { scannedTexts } from './issue-keys.ts'

/** A revert lists at most this many reverted commits and pull requests. */
export const MAX_REVERTS = 20

export type Remediation =
  /** The `remediates` input: the change id or version this deploy fixes. */
  | { type: 'fix'; of: string }
  /** The deploy is older than the previous one, whose SHA is `of`. */
  | { type: 'rollback'; of: string }
  /** The reverted commits' SHAs (lowercase), then the reverting pull requests as `#N`. */
  | { type: 'revert'; reverts: string[] }
  | { type: 'hotfix' }

export interface RemediationInput {
  /** The `remediates` input, when given. */
  remediates?: string
  /** The previous deploy's SHA, when this deploy is a rollback. */
  rollbackOf?: string
  /** Full commit messages, every line. */
  messages: readonly string[]
  pullRequests: readonly { number: number; title?: string }[]
  /** The pushed branch or the pull request's head branch, without refs/heads/. */
  branch?: string
}

/** The line `git revert` writes. */
const REVERTED_COMMIT = /(?<![A-Za-z0-9])This reverts commit ([0-9a-f]{7,40})(?![A-Za-z0-9])/gi
/** The title GitHub's Revert button gives a pull request. */
const REVERT_TITLE = /^\s*Revert "/i
const HOTFIX_BRANCH = /^hotfix[/-]/i
const HOTFIX_TITLE = /^\s*(?:\[hotfix\]|hotfix)/i

export function remediationOf(input: RemediationInput): Remediation | undefined {
  const remediates = input.remediates?.trim()
  if (remediates) return { type: 'fix', of: remediates }
  if (input.rollbackOf) return { type: 'rollback', of: input.rollbackOf }
  const reverts = new Set<string>()
  for (const message of scannedTexts(input.messages)) {
    for (const [, sha] of message.matchAll(REVERTED_COMMIT)) reverts.add(sha.toLowerCase())
  }
  for (const { number, title } of input.pullRequests) {
    if (title !== undefined && REVERT_TITLE.test(title)) reverts.add(`#${number}`)
  }
  if (reverts.size > 0) return { type: 'revert', reverts: [...reverts].slice(0, MAX_REVERTS) }
  const hotfixTitle = input.pullRequests.some(({ title }) => HOTFIX_TITLE.test(title ?? ''))
  if (HOTFIX_BRANCH.test(input.branch ?? '') || hotfixTitle) return { type: 'hotfix' }
  return undefined
}

/**
 * Triage at a glance, from what the lookup already read: the issues shipped and closed, and what
 * the deploy remediates, beside the risk of the paths changed. Pure.
 */
import type { IssueKeyMode } from '../settings.ts'
import { closedIssuesIn, issueKeysIn, scannedMessages, scannedTexts } from './issue-keys.ts'
import { remediationOf, unrevertedText } from './remediation.ts'
import type { Remediation, RemediationInput } from './remediation.ts'
import type { Risk } from './risk.ts'

/** Issue keys listed, the newest; `issueCount` gives the exact number beyond. */
export const MAX_ISSUES = 50
/** Closed issues listed, the newest. */
export const MAX_CLOSES = 50

export interface TriageInput extends RemediationInput {
  issueKeys: IssueKeyMode
  /** The run's repository, owner/repo. */
  repository: string
  /** The run's server, as https://github.com or a GitHub Enterprise Server's URL. */
  serverUrl?: string
  /** The repository is on GitLab: `#N` is an issue, closed by GitLab's own pattern. */
  gitlab?: boolean
  /** Every shipped commit's message was read: else the issues found are a part. */
  everyCommitRead: boolean
}

/** Keys are absent when nothing was found. */
export interface Triage extends Risk {
  /** Newest first, as `closes`: the branch's, the titles', then the commits' from the newest. */
  issues?: string[]
  /** Set when there are more than MAX_ISSUES keys. */
  issueCount?: number
  closes?: string[]
  /** Set when more than MAX_CLOSES issues are closed. */
  closeCount?: number
  /** False when issues were found but some shipped commits, or some of their text, were not read. */
  issuesComplete?: false
  remediation?: Remediation
  /** Where the closed issues are linked, when not the run's repository (a GitLab checkout's). */
  issueLinks?: { serverUrl: string; repository: string; gitlab?: boolean }
}

export function triage(input: TriageInput, risk: Risk): Triage {
  const titles = input.pullRequests.map(pull => pull.title)
  const sources = [input.branch, ...titles, ...input.messages]
  // Newest first, so that the lists keep the newest past their bounds: the branch (the deploy's
  // own), the titles, then the messages, the titles and the messages each newest first.
  const texts = [
    ...scannedTexts([input.branch, ...titles.toReversed()]),
    ...scannedMessages(input.messages).toReversed()
  ]
  const everyTextRead = texts.join('').length === sources.join('').length
  const keys = issueKeysIn(texts, input.issueKeys)
  const { repository, serverUrl, gitlab } = input
  const closes = closedIssuesIn(texts.map(unrevertedText), repository, serverUrl, gitlab)
  const remediation = remediationOf(input)
  const found = keys.length > 0 || closes.length > 0
  return {
    ...(keys.length > 0 && { issues: keys.slice(0, MAX_ISSUES) }),
    ...(keys.length > MAX_ISSUES && { issueCount: keys.length }),
    ...(closes.length > 0 && { closes: closes.slice(0, MAX_CLOSES) }),
    ...(closes.length > MAX_CLOSES && { closeCount: closes.length }),
    ...(found && !(input.everyCommitRead && everyTextRead) && { issuesComplete: false as const }),
    ...risk,
    ...(remediation && { remediation })
  }
}

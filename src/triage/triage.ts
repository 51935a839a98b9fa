/**
 * Triage at a glance, from what the lookup already read: the issues shipped and closed, the risk
 * of the paths changed, what the deploy remediates, and the labels that carry them. Pure.
 */
import type { ChangedFiles, ServiceSpec } from '../affected-services.ts'
import type { DeployOutcome } from '../deploy.ts'
import { closedIssuesIn, issueKeysIn, scannedTexts, type IssueKeyMode } from './issue-keys.ts'
import { labelsWith } from './labels.ts'
import { remediationOf, type Remediation } from './remediation.ts'
import { riskOf } from './risk.ts'

/** Issue keys listed; `issueCount` gives the exact number beyond. */
export const MAX_ISSUES = 50
/** Closed issues listed. */
export const MAX_CLOSES = 50

export interface TriageInput {
  /** Full commit messages, every line, oldest first. */
  commits: readonly { message: string }[]
  pullRequests: readonly { number: number; title?: string }[]
  /** The pushed branch or the pull request's head branch, without refs/heads/. */
  branch?: string
  changed: ChangedFiles
  /** The parsed `risk-paths` input; the built-in categories when absent. */
  riskPaths?: ServiceSpec[]
  issueKeys: IssueKeyMode
  /** The run's repository, owner/repo. */
  repository: string
  /** The run's server, as https://github.com or a GitHub Enterprise Server's URL. */
  serverUrl: string
  /** How the deploy ended, when known. */
  outcome?: DeployOutcome
  /** The previous deploy's SHA, when this deploy is a rollback. */
  rollbackOf?: string
  /** The `remediates` input. */
  remediates?: string
  /** The user's `labels`. */
  labels?: readonly string[]
  autoLabels: boolean
}

/** Keys are absent when nothing was found. */
export interface Triage {
  /** The user's labels, then the action's: the change's `labels`. */
  labels: string[]
  issues?: string[]
  /** Set when there are more than MAX_ISSUES keys. */
  issueCount?: number
  closes?: string[]
  risk?: Record<string, string[]>
  riskComplete: boolean
  remediation?: Remediation
}

export function triage(input: TriageInput): Triage {
  const messages = input.commits.map(commit => commit.message)
  const titles = input.pullRequests.map(pull => pull.title)
  const texts = scannedTexts([input.branch, ...titles, ...messages])
  const keys = issueKeysIn(texts, input.issueKeys)
  const closes = closedIssuesIn(texts, input.repository, input.serverUrl).slice(0, MAX_CLOSES)
  const { risk, riskComplete } = riskOf(input.changed, input.riskPaths)
  const remediation = remediationOf({ ...input, messages })
  const facts = {
    outcome: input.outcome,
    remediation: remediation?.type,
    risk: Object.keys(risk ?? {}),
    issues: keys
  }
  return {
    labels: labelsWith(input.labels ?? [], facts, input.autoLabels),
    ...(keys.length > 0 && { issues: keys.slice(0, MAX_ISSUES) }),
    ...(keys.length > MAX_ISSUES && { issueCount: keys.length }),
    ...(closes.length > 0 && { closes }),
    ...(risk && { risk }),
    riskComplete,
    ...(remediation && { remediation })
  }
}

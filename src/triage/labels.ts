/**
 * The labels the action adds to a change, each `key:value`, after the user's own: what the
 * service filters on. A label never holds a comma (it would split in two) or a character that
 * breaks a line, reorders text or shows nothing.
 */
import type { DeployOutcome } from '../deploy.ts'
import { truncateText, UNSEEN_CHARACTERS } from '../helpers/text.ts'
import type { Remediation } from './remediation.ts'

/** The action adds at most this many labels to the user's. */
export const MAX_ADDED_LABELS = 20
/** An added label longer than this is cut, ending in "…". */
export const MAX_LABEL_CHARS = 100
/** At most this many `issue:KEY` labels: the first of the keys, which are listed newest first. */
export const MAX_ISSUE_LABELS = 10

/** What is known of a change; each fact that is absent adds no label. */
export interface LabelFacts {
  outcome?: DeployOutcome
  remediation?: Remediation['type']
  /** The matched risk categories. */
  risk?: readonly string[]
  /** Issue keys, newest first (as triage lists them). */
  issues?: readonly string[]
}

const NOT_IN_LABEL = new RegExp(`[,${UNSEEN_CHARACTERS}]+`, 'gu')

/** `key:value`, each run of characters a label cannot hold made one "-"; none when empty. */
function label(key: string, value: string): string | undefined {
  const clean = value.replace(NOT_IN_LABEL, '-').trim()
  return clean === '' ? undefined : truncateText(`${key}:${clean}`, MAX_LABEL_CHARS)
}

/**
 * Whether a user's label says another outcome (`outcome:success` on a failed deploy, in any letter
 * case) than the one the action knows; never when the action does not know it.
 */
export function contradictsOutcome(text: string, outcome: DeployOutcome | undefined): boolean {
  const [key, value] = text.split(':', 2)
  if (outcome === undefined || outcome === 'unknown' || value === undefined) return false
  return key.trim().toLowerCase() === 'outcome' && value.trim().toLowerCase() !== outcome
}

/**
 * The user's labels (trimmed), then the action's in the order outcome, remediation, risk, issues;
 * a label already present (exactly, letter case included) is not added twice. A user's label
 * that contradicts the known outcome is dropped, whether the action adds its own or not.
 */
export function labelsWith(
  userLabels: readonly string[],
  facts: LabelFacts,
  autoLabels: boolean
): string[] {
  const labels = new Set(
    userLabels
      .map(text => text.trim())
      .filter(text => text !== '' && !contradictsOutcome(text, facts.outcome))
  )
  if (!autoLabels) return [...labels]
  const known = facts.outcome === 'unknown' ? undefined : facts.outcome
  const candidates = [
    known && label('outcome', known),
    facts.remediation && label('remediation', facts.remediation),
    ...(facts.risk ?? []).map(name => label('risk', name)),
    ...(facts.issues ?? []).slice(0, MAX_ISSUE_LABELS).map(key => label('issue', key))
  ]
  const added = candidates.filter(candidate => candidate !== undefined)
  return [...new Set([...labels, ...added])].slice(0, labels.size + MAX_ADDED_LABELS)
}

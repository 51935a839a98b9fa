/**
 * Triage for the `change` command: the risk of the paths changed, the issues shipped and closed,
 * and what the deploy remediates, from what the lookup already read (no GitHub API call).
 */
import type { RunDefaults } from '../change.ts'
import type { Shipped } from '../shipped/types.ts'
import { riskOf, type Risk } from '../triage/risk.ts'
import { triage, type Triage } from '../triage/triage.ts'
import type { Report } from '../report.ts'
import type { CommandContext } from './command.ts'
import { changedFiles } from './shipped.ts'

export async function findTriage(
  { settings, run }: CommandContext,
  defaults: RunDefaults,
  shipped: Shipped | undefined
): Promise<Triage> {
  const changed = changedFiles(settings.includeCommits, shipped)
  let risk: Risk = { riskComplete: false }
  if (changed.files !== undefined) {
    // Loaded only when there are files to match: glob matching is not every run's cost.
    const { selectServices } = await import('../affected-services.ts')
    risk = riskOf(changed, selectServices(settings.triage.riskPaths, changed))
  }
  return triage(
    {
      messages: shipped?.messages ?? [],
      pullRequests: shipped?.pullRequests ?? [],
      branch: defaults.branch,
      issueKeys: settings.triage.issueKeys,
      repository: run.repository ?? '',
      serverUrl: run.serverUrl,
      rollbackOf: shipped?.rollback ? shipped.previousSha : undefined,
      remediates: settings.triage.remediates,
      everyCommitRead: shipped?.pullRequestsComplete ?? false
    },
    risk
  )
}

/** What triage found, in one line of the log; nothing when it found nothing. */
export function logTriage(report: Report, triage: Triage): void {
  const found = [
    triage.remediation && `remediation ${triage.remediation.type}`,
    triage.risk && `risk ${Object.keys(triage.risk).join(', ')}`,
    triage.issues && `issues ${triage.issues.join(', ')}`,
    triage.closes && `closes ${triage.closes.join(', ')}`
  ].filter(Boolean)
  if (found.length > 0) report.info(`Triage: ${found.join('; ')}.`)
}

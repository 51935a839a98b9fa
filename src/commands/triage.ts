/**
 * Triage for the `change` command: the risk of the paths changed, the issues shipped and closed,
 * and what the deploy remediates, from what the lookup already read (no GitHub API call).
 */
import type { RunDefaults } from '../change.ts'
import type { Shipped } from '../shipped/types.ts'
import { BUILT_IN_RISK, riskOf, type Risk } from '../triage/risk.ts'
import type { Remediation } from '../triage/remediation.ts'
import { triage, type Triage } from '../triage/triage.ts'
import { shortSha } from '../describe.ts'
import type { Report } from '../report.ts'
import type { Link, SummaryRow } from '../summary.ts'
import type { CommandContext } from './command.ts'
import { changedFiles } from './shipped.ts'

export async function findTriage(
  { settings, run }: CommandContext,
  shipped: Shipped | undefined
): Promise<Triage> {
  const changed = changedFiles(settings.includeCommits, shipped)
  let risk: Risk = { riskComplete: false }
  if (changed.files !== undefined) {
    // Loaded only when there are files to match: glob matching is not every run's cost.
    const { selectServices } = await import('../affected-services.ts')
    const categories = settings.triage.riskPaths ?? BUILT_IN_RISK
    risk = riskOf(changed, selectServices(categories, changed))
  }
  return triage(
    {
      messages: shipped?.messages ?? [],
      pullRequests: shipped?.pullRequests ?? [],
      branch: run.branch,
      issueKeys: settings.triage.issueKeys,
      repository: run.links?.repository ?? '',
      serverUrl: run.links?.serverUrl,
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

/** The summary's triage block lists at most this many issues and closed issues; the rest counted. */
const MAX_SUMMARY_ISSUES = 5

/**
 * The triage rows of the summary's lead block: remediation, each risk category with its paths,
 * issue keys, and the closed issues linked on the run's server.
 */
export function triageRows(triage: Triage, links: RunDefaults['links']): SummaryRow[] {
  const { remediation } = triage
  const risk = Object.entries(triage.risk ?? {}).map(([name, paths]): SummaryRow => [
    `Risk: ${name}`,
    paths.join(', ') || 'matched'
  ])
  return [
    ['Remediation', remediation && remediationText(remediation)],
    ...risk,
    ...(triage.riskComplete || triage.risk === undefined
      ? []
      : [['Risk', 'incomplete: not every changed file is known'] as const]),
    ['Issues', triage.issues && shortList(triage.issues, triage.issueCount)],
    ['Closes', triage.closes && closedLinks(triage.closes, triage.closeCount, links)]
  ]
}

function remediationText(remediation: Remediation): string {
  if (remediation.type === 'hotfix') return 'hotfix'
  if (remediation.type === 'revert') {
    // What the texts name: SHAs (short), pull requests, quoted subjects; maybe nothing.
    const reverted = remediation.reverts.map(ref => shortSha(ref)).join(', ')
    return reverted ? `revert of ${reverted}` : 'revert'
  }
  const of = remediation.type === 'rollback' ? shortSha(remediation.of) : remediation.of
  return `${remediation.type} of ${of}`
}

/** The first items, then how many more: "ENG-1, ENG-2 (+48 more)". */
function shortList(items: readonly string[], count = items.length): string {
  const more = count - Math.min(items.length, MAX_SUMMARY_ISSUES)
  return `${items.slice(0, MAX_SUMMARY_ISSUES).join(', ')}${more > 0 ? ` (+${more} more)` : ''}`
}

/** `#N` and `owner/repo#N`, each linked to its issue on the run's server, when it has one. */
function closedLinks(
  closes: readonly string[],
  count: number = closes.length,
  run: RunDefaults['links']
): Link[] {
  const links: Link[] = closes.slice(0, MAX_SUMMARY_ISSUES).map(ref => {
    const [name, number] = ref.startsWith('#') ? [run?.repository, ref.slice(1)] : ref.split('#')
    return { text: ref, url: name && run ? `${run.serverUrl}/${name}/issues/${number}` : undefined }
  })
  const more = count - links.length
  return more > 0 ? [...links, { text: `+${more} more` }] : links
}

/**
 * Triage for the `change` command: the risk of the paths changed, the issues shipped and closed,
 * and what the deploy remediates, from what the lookup already read (no GitHub API call).
 */
import type { RunDefaults } from '../change.ts'
import { selectServices, touches } from '../services/selection.ts'
import { pullRequestInMessage } from '../shipped/pull-requests.ts'
import type { Shipped } from '../shipped/types.ts'
import { BUILT_IN_RISK, riskNames, riskOf, type Risk } from '../triage/risk.ts'
import { plural } from '../helpers/text.ts'
import type { Remediation } from '../triage/remediation.ts'
import { triage, type Triage } from '../triage/triage.ts'
import { shortSha } from '../describe.ts'
import type { Report } from '../report.ts'
import type { Settings } from '../settings.ts'
import type { Link, SummaryRow } from '../summary.ts'
import { changedFiles } from './shipped.ts'

export function findTriage(
  { settings, run }: { settings: Pick<Settings, 'includeCommits' | 'triage'>; run: RunDefaults },
  shipped: Shipped | undefined
): Triage {
  const changed = changedFiles(settings.includeCommits, shipped)
  // No path read: unknown, for the lookup's reason; else the lookup fell short, and read none.
  const why = shipped?.pathsUnknown
  const unread = why ? { riskUnknown: why } : shipped && { pathsRead: 0 }
  const risk: Risk =
    changed.files === undefined
      ? { riskComplete: false, ...unread }
      : riskOf(changed, selectServices(settings.triage.riskPaths ?? BUILT_IN_RISK, changed))
  const links = issueLinks(run.links, shipped)
  const found = triage(
    {
      messages: shipped?.messages ?? [],
      pullRequests: shipped?.pullRequests ?? [],
      branch: run.branch,
      issueKeys: settings.triage.issueKeys,
      repository: links?.repository ?? '',
      serverUrl: links?.serverUrl,
      gitlab: shipped?.forge?.kind === 'gitlab',
      rollbackOf: shipped?.rollback ? shipped.previousSha : undefined,
      remediates: settings.triage.remediates,
      commits: shipped?.commits,
      everyCommitRead: !!shipped?.pullRequestsComplete && shipped.messagesComplete !== false
    },
    risk
  )
  return links === run.links ? found : { ...found, issueLinks: links }
}

/** Where issues are linked: the run's repository, or on GitLab the checkout's own (`/-/issues/N`). */
function issueLinks(run: RunDefaults['links'], shipped: Shipped | undefined): Triage['issueLinks'] {
  const web = shipped?.forge?.kind === 'gitlab' ? shipped.forge.web : undefined
  if (!web) return run
  const { origin, pathname } = new URL(web)
  return { serverUrl: origin, repository: pathname.slice(1), gitlab: true }
}

/**
 * What one service of several shipped: its own changed paths, and the commits that touched them
 * (a merge's against its first parent). A lookup that cannot tell which commits touched which
 * paths keeps every commit, and the keys are said to be a part.
 */
export function serviceShipped(shipped: Shipped, matches: (path: string) => boolean): Shipped {
  const { touched, forge } = shipped
  const mine = shipped.commits.map(({ sha }) => !touched || !!touched[sha]?.some(matches))
  const messages = shipped.messages.filter((_, index) => mine[index])
  const numbers = new Set(
    messages.map(text => pullRequestInMessage(text, forge?.kind, forge?.web)?.number)
  )
  return {
    ...shipped,
    changedFiles: shipped.changedFiles?.filter(file => touches(matches, file)),
    messages,
    pullRequests: shipped.pullRequests.filter(pull => !touched || numbers.has(pull.number)),
    pullRequestsComplete: shipped.pullRequestsComplete && !!touched
  }
}

/** What triage found, in one line of the log (a service's, after its name); nothing when nothing. */
export function logTriage(report: Report, triage: Triage, service?: string): void {
  const names = riskNames(triage)
  const found = [
    triage.remediation && `remediation ${triage.remediation.type}`,
    names.length > 0 && `risk ${names.join(', ')}`,
    triage.issues && `issues ${triage.issues.join(', ')}`,
    triage.closes && `closes ${triage.closes.join(', ')}`
  ].filter(Boolean)
  if (found.length > 0) report.info(`${service ? `${service}: ` : ''}Triage: ${found.join('; ')}.`)
}

/** The summary's triage block lists at most this many issues and closed issues; the rest counted. */
const MAX_SUMMARY_ISSUES = 5

/**
 * The triage rows of the summary's lead block: remediation, each risk category with its paths,
 * issue keys, and the closed issues linked on the run's server.
 */
export function triageRows(triage: Triage, links: RunDefaults['links']): SummaryRow[] {
  return [
    ['Remediation', triage.remediation && remediationText(triage.remediation)],
    ...Object.entries(triage.risk ?? {}).map(([name, paths]): SummaryRow => [
      `Risk: ${name}`,
      paths.join(', ') || 'matched'
    ]),
    [
      'Risk: incomplete',
      triage.riskComplete || triage.pathsRead === undefined
        ? undefined
        : `risk read from ${plural(triage.pathsRead, 'changed path')}; more changed`
    ],
    ['Risk: unknown', triage.riskUnknown],
    ['Issues', triage.issues && shortList(triage.issues, triage.issueCount)],
    [
      'Closes',
      triage.closes && closedLinks(triage.closes, triage.issueLinks ?? links, triage.closeCount)
    ]
  ]
}

function remediationText(remediation: Remediation): string {
  if (remediation.type === 'hotfix') return 'hotfix'
  if (remediation.type === 'revert') {
    // What the texts name: SHAs (short), pull requests, quoted subjects; maybe nothing.
    const reverted = remediation.reverts.map(ref => shortSha(ref)).join(', ')
    return reverted ? `revert of ${reverted}` : 'revert'
  }
  if (remediation.of === undefined) return remediation.type
  const of = remediation.type === 'rollback' ? shortSha(remediation.of) : remediation.of
  return `${remediation.type} of ${of}`
}

/** The first items, then how many more: "ENG-1, ENG-2 (+48 more)". */
function shortList(items: readonly string[], count = items.length): string {
  const more = count - Math.min(items.length, MAX_SUMMARY_ISSUES)
  return `${items.slice(0, MAX_SUMMARY_ISSUES).join(', ')}${more > 0 ? ` (+${more} more)` : ''}`
}

/** `#N` and `owner/repo#N`, each linked to its issue on the run's server, when it has one. */
function closedLinks(closes: string[], run: Triage['issueLinks'], count = closes.length): Link[] {
  const issues = run?.gitlab ? '-/issues' : 'issues'
  const links: Link[] = closes.slice(0, MAX_SUMMARY_ISSUES).map(ref => {
    const [name, number] = ref.startsWith('#') ? [run?.repository, ref.slice(1)] : ref.split('#')
    const url = name && run ? `${run.serverUrl}/${name}/${issues}/${number}` : undefined
    return { text: ref, url }
  })
  const more = count - links.length
  return more > 0 ? [...links, { text: `+${more} more` }] : links
}

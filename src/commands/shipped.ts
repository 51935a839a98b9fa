/**
 * What a change ships, for the `change` command: the lookup (which never fails the run), its
 * place in the change's defaults, its outputs, and its table in the job summary.
 */
import { Inputs, Outputs } from '../action/names.ts'
import type { Settings } from '../action/settings.ts'
import type { ChangeDefaults, Env } from '../context.ts'
import type { Report } from '../report.ts'
import { describeDeploy } from '../shipped/describe.ts'
import { lookUpShipped } from '../shipped/lookup.ts'
import { shippedMetadata } from '../shipped/metadata.ts'
import { pullRequestInMessage } from '../shipped/pull-requests.ts'
import type { Shipped } from '../shipped/types.ts'
import { plural } from '../text.ts'

/** GitHub's public API, when the runner does not name its server's (GITHUB_API_URL). */
const DEFAULT_API_URL = 'https://api.github.com'
const DEFAULT_SERVER_URL = 'https://github.com'
/** The summary lists at most this many commits; the metadata carries its own capped list. */
const MAX_SUMMARY_COMMITS = 50

/**
 * Looks up what the change ships, unless include-commits is false (then no GitHub API call is
 * made). Any failure is one warning; the change is recorded without that part.
 */
export async function findShipped(
  settings: Settings,
  defaults: ChangeDefaults,
  payload: unknown,
  env: Env,
  report: Report
): Promise<Shipped | undefined> {
  if (!settings.includeCommits) return undefined
  const repository = defaults.github.repository
  const version = settings.change.version ?? defaults.version
  if (!repository || !version) return undefined
  const { shipped, warning } = await lookUpShipped({
    token: settings.githubToken,
    apiUrl: env['GITHUB_API_URL']?.trim() || DEFAULT_API_URL,
    serverUrl: env['GITHUB_SERVER_URL']?.trim() || DEFAULT_SERVER_URL,
    repository,
    eventName: env['GITHUB_EVENT_NAME']?.trim() ?? '',
    payload,
    runId: env['GITHUB_RUN_ID']?.trim(),
    version,
    previousVersion: settings.previousVersion,
    environment: settings.change.environment ?? defaults.environment,
    advice: { tokenInput: Inputs.GithubToken }
  })
  if (warning) report.warning(warning)
  return shipped
}

/** The context's defaults, with what the change ships in its description and metadata. */
export function withShipped(
  defaults: ChangeDefaults,
  shipped: Shipped | undefined,
  environment: string | undefined
): ChangeDefaults {
  if (shipped === undefined) return defaults
  const description = describeDeploy({
    repository: defaults.service,
    version: defaults.version,
    environment,
    shipped
  })
  return {
    ...defaults,
    description: description ?? defaults.description,
    github: { ...defaults.github, ...shippedMetadata(shipped) }
  }
}

/** The outputs about what shipped, set whether or not the lookup found anything. */
export function outputShipped(report: Report, shipped: Shipped | undefined): void {
  report.output(Outputs.PreviousVersion, shipped?.previousSha ?? '')
  report.output(Outputs.CommitCount, shipped?.commitCount?.toString() ?? '')
  report.output(Outputs.CompareUrl, shipped?.compareUrl ?? '')
  report.output(Outputs.Rollback, String(shipped?.rollback ?? false))
}

/** Dry run: what the lookup found, in one line. */
export function printShipped(report: Report, shipped: Shipped | undefined): void {
  if (shipped === undefined) return
  const found = [
    shipped.previousSha
      ? `previous deploy ${shipped.previousSha} (from ${shipped.source ?? 'unknown'})`
      : 'no previous deploy',
    shipped.commitCount !== undefined && plural(shipped.commitCount, 'commit'),
    shipped.pullRequestCount > 0 && plural(shipped.pullRequestCount, 'pull request'),
    shipped.rollback && 'a rollback',
    shipped.compareUrl,
    plural(shipped.apiCalls, 'GitHub API call')
  ].filter(Boolean)
  report.info(`[dry-run] What the change ships: ${found.join(', ')}.`)
}

/** The commits with their pull requests, as a table an on-call engineer reads at a glance. */
export function summarizeShipped(report: Report, shipped: Shipped | undefined): void {
  if (shipped === undefined || shipped.commits.length === 0) return
  const byNumber = new Map(shipped.pullRequests.map(pr => [pr.number, pr]))
  const commits = shipped.commits.slice(-MAX_SUMMARY_COMMITS)
  const count = shipped.commitCount ?? shipped.commits.length
  const title =
    count > commits.length
      ? `Commits (the newest ${commits.length} of ${count})`
      : `Commits (${commits.length})`
  report.list(
    title,
    ['Commit', 'Message', 'Author', 'Pull request'],
    commits.map(commit => {
      const found = pullRequestInMessage(commit.message)
      const pr = found ? byNumber.get(found.number) : undefined
      return [
        commit.sha.slice(0, 7),
        commit.message,
        commit.author,
        pr && { text: `#${pr.number}${pr.title ? ` ${pr.title}` : ''}`, url: pr.url }
      ]
    })
  )
}

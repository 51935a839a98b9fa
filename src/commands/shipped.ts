/**
 * What a change ships, for the `change` command: the lookup (which never fails the run), its
 * place in the change's defaults, its outputs, and its table in the job summary.
 */
import { Inputs, Outputs } from '../action/names.ts'
import type { ChangeDefaults } from '../change.ts'
import type { Report } from '../report.ts'
import type { ChangeRequest } from '../service/client.ts'
import { describeDeploy } from '../shipped/describe.ts'
import { lookUpShipped } from '../shipped/lookup.ts'
import { leadTime } from '../lead-time.ts'
import { shippedMetadata } from '../shipped/metadata.ts'
import { pullRequestInMessage } from '../shipped/pull-requests.ts'
import type { Shipped } from '../shipped/types.ts'
import { plural } from '../text.ts'
import type { CommandContext } from './command.ts'

/** The summary lists at most this many commits; the metadata carries its own capped list. */
const MAX_SUMMARY_COMMITS = 50

/**
 * Looks up what the change ships, unless include-commits is false (then no GitHub API call is
 * made). `subject` is the change as merged so far: its service, version and environment are the
 * ones the lookup is about. Any failure is one warning; the change is recorded without that part.
 */
export async function findShipped(
  { settings, run, report }: CommandContext,
  subject: ChangeRequest
): Promise<Shipped | undefined> {
  if (!settings.includeCommits) return undefined
  const repository = run.repository
  const version = subject.version
  if (!repository || !version) return undefined
  const { shipped, warning } = await lookUpShipped({
    token: settings.githubToken,
    apiUrl: run.apiUrl,
    serverUrl: run.serverUrl,
    repository,
    eventName: run.eventName,
    payload: run.payload,
    runId: run.runId,
    version,
    previousVersion: settings.previousVersion,
    environment: subject.environment,
    advice: { tokenInput: Inputs.GithubToken }
  })
  if (warning) report.warning(warning)
  return shipped
}

/** What a change's defaults are completed with: the lookup, the change so far, the moment. */
export interface ShippedBasis {
  shipped: Shipped | undefined
  /** The change as merged before the lookup: its version and environment. */
  subject: ChangeRequest
  /** Milliseconds since the epoch: when the change is recorded, for the lead time. */
  recordedAt: number
}

/** One service of several: its name, and what its patterns matched when that is known. */
export interface ServiceDefaults {
  name: string
  matchingFiles?: number
  metadata?: Record<string, unknown>
}

/**
 * The defaults with what the change ships in their description and metadata (the commits, their
 * lead time) and, for one service of several, its name and matched paths.
 */
export function withShipped(
  defaults: ChangeDefaults,
  { shipped, subject, recordedAt }: ShippedBasis,
  service: ServiceDefaults | undefined = undefined
): ChangeDefaults {
  if (shipped === undefined && service === undefined) return defaults
  const description = describeDeploy({
    repository: defaults.service,
    version: subject.version,
    environment: subject.environment,
    shipped,
    serviceName: service?.name,
    matchingFiles: service?.matchingFiles
  })
  const waited = shipped && leadTime(shipped.commits, recordedAt)
  return {
    ...defaults,
    ...(service ? { service: service.name } : {}),
    description: description ?? defaults.description,
    metadata: {
      ...defaults.metadata,
      github: {
        ...defaults.metadata.github,
        ...(shipped ? shippedMetadata(shipped) : {}),
        ...(waited ? { lead_time_seconds: waited } : {}),
        ...service?.metadata
      }
    }
  }
}

/** The outputs about what shipped, set whether or not the lookup found anything. */
export function outputShipped(report: Report, shipped: Shipped | undefined): void {
  report.output(Outputs.PreviousVersion, shipped?.previousSha ?? '')
  report.output(Outputs.CommitCount, shipped?.commitCount?.toString() ?? '')
  report.output(Outputs.CompareUrl, shipped?.compareUrl ?? '')
  report.output(Outputs.Rollback, String(shipped?.rollback ?? false))
}

/** What the lookup found, in one line of the log. */
export function logShipped(report: Report, shipped: Shipped | undefined): void {
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
  report.info(`What the change ships: ${found.join(', ')}.`)
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

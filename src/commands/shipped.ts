/**
 * What a change ships, for the `change` command: the lookup (which never fails the run), its
 * outputs, its line in the log and its table in the job summary.
 */
import type { RunDefaults } from '../change.ts'
import { shortSha } from '../describe.ts'
import type { Report } from '../report.ts'
import { MAX_COMPARE_FILES } from '../shipped/compare.ts'
import { pullRequestInMessage } from '../shipped/pull-requests.ts'
import { lookUpShipped } from '../shipped/lookup-source.ts'
import { emptyShipped, type Shipped } from '../shipped/types.ts'
import type { ChangedFiles } from '../services/selection.ts'
import { Outputs } from '../settings.ts'
import type { Section } from '../summary.ts'
import { plural } from '../helpers/text.ts'
import type { OutputValues } from '../report.ts'
import type { CommandContext } from './command.ts'

/** The summary lists at most this many commits; the metadata carries its own capped list. */
const MAX_SUMMARY_COMMITS = 50

/** What the change ships (unless include-commits is false); any failure is one warning. */
export async function findShipped(
  { settings, report, signal, lookup }: CommandContext,
  { version, environment }: { version?: string; environment?: string }
): Promise<Shipped | undefined> {
  if (!settings.includeCommits || !lookup || !version) return undefined
  const { shipped, warning } = await lookUpShipped(lookup, { version, environment }, signal)
  if (warning) report.warning(warning)
  if (lookup.from === 'github' && shipped) {
    const pathsUnknown = unreadOnGitHub(shipped, lookup.options.token, warning)
    return pathsUnknown ? { ...shipped, pathsUnknown } : shipped
  }
  // A lookup that read nothing still tells the change that its commits are not known.
  return shipped ?? (warning === undefined ? undefined : emptyShipped())
}

/** Why GitHub's lookup read no changed path, when that is no failure: the risk is unknown then. */
function unreadOnGitHub(shipped: Shipped, token: string, warning?: string) {
  if (!token && shipped.changedFiles === undefined) return 'no token'
  // The compare of an older version lists none of the paths it takes back.
  if (shipped.rollback && !shipped.changedFiles?.length) return 'rollback paths not listed'
  if (shipped.previousSha === undefined && warning === undefined) return 'no previous deploy'
  return undefined
}

/** What is known of the files changed since the previous deploy, and why not more. */
export function changedFiles(includeCommits: boolean, shipped: Shipped | undefined): ChangedFiles {
  const unknown = (reason: string): ChangedFiles => ({ complete: false, reason })
  if (!includeCommits) return unknown('include-commits is false')
  if (shipped?.pathsUnknown) return unknown(shipped.pathsUnknown)
  if (shipped?.previousSha === undefined) return unknown('no previous deploy was found')
  if (shipped.changedFiles === undefined) return unknown('the lookup did not read them')
  const files = { files: shipped.changedFiles, complete: shipped.changedFilesComplete }
  if (files.complete) return files
  if (shipped.readFrom === 'git')
    return { ...files, reason: 'the lookup read the paths within its bounds' }
  if (shipped.forge?.kind === 'gitlab')
    return { ...files, reason: "GitLab's compare lists the files within its bounds" }
  return { ...files, reason: `GitHub's compare lists at most ${MAX_COMPARE_FILES} files` }
}

/** The outputs about what shipped, whether or not the lookup found anything. */
export function shippedOutputs(shipped: Shipped | undefined): OutputValues {
  return {
    [Outputs.PreviousVersion]: shipped?.previousSha ?? '',
    [Outputs.CommitCount]: shipped?.commitCount?.toString() ?? '',
    [Outputs.CompareUrl]: shipped?.compareUrl ?? '',
    [Outputs.Rollback]: String(shipped?.rollback ?? false)
  }
}

/** What the lookup found, in one line of the log. */
export function logShipped(report: Report, shipped: Shipped | undefined): void {
  // A lookup that read nothing said why in its warning.
  const nothing = !shipped?.readFrom && !shipped?.apiCalls && !shipped?.commits.length
  if (shipped === undefined || (nothing && !shipped.previousSha)) return
  const requestWord = shipped.forge?.kind === 'gitlab' ? 'merge request' : 'pull request'
  const found = [
    shipped.previousSha
      ? `previous ${shipped.source === 'previous-push' ? 'push' : 'deploy'} ${shipped.previousSha} (from ${shipped.source ?? 'unknown'})`
      : 'no previous deploy',
    shipped.commitCount !== undefined && plural(shipped.commitCount, 'commit'),
    shipped.pullRequestCount > 0 &&
      `${shipped.pullRequestsComplete ? '' : 'at least '}${plural(shipped.pullRequestCount, requestWord)}`,
    shipped.rollback && 'a rollback',
    shipped.compareUrl,
    shipped.readFrom === 'git'
      ? 'read from the checkout'
      : plural(shipped.apiCalls, `${forgeName(shipped.forge)} API call`)
  ].filter(Boolean)
  report.info(`What the change ships: ${found.join(', ')}.`)
}

/** The forge whose API a lookup asked: GitHub's, unless it read GitLab's. */
function forgeName(forge: Shipped['forge']): string {
  return forge?.kind === 'gitlab' ? 'GitLab' : 'GitHub'
}

/** The commits with their pull requests, as a table; each short SHA links to its commit page. */
export function shippedSections(
  shipped: Shipped | undefined,
  links: RunDefaults['links']
): Section[] {
  if (shipped === undefined || shipped.commits.length === 0) return []
  const byNumber = new Map(shipped.pullRequests.map(pr => [pr.number, pr]))
  const commits = shipped.commits.slice(-MAX_SUMMARY_COMMITS)
  // Each commit's whole message: a GitLab merge commit names its request on its last line.
  const messages = shipped.messages.slice(-MAX_SUMMARY_COMMITS)
  const count = shipped.commitCount ?? shipped.commits.length
  const of = shipped.pullRequestsComplete ? 'of' : 'read of'
  const title =
    count > commits.length
      ? `Commits (the newest ${commits.length} ${of} ${count})`
      : `Commits (${commits.length})`
  const { kind, web } = shipped.forge ?? {}
  const [heading, mark] = kind === 'gitlab' ? ['Merge request', '!'] : ['Pull request', '#']
  const rows = commits.map((commit, index) => {
    const found = pullRequestInMessage(messages[index] ?? commit.message, kind, web)
    const pr = found ? byNumber.get(found.number) : undefined
    const page = /^[0-9a-f]{40,64}$/i.test(commit.sha) && links
    return [
      {
        text: shortSha(commit.sha),
        url: page ? `${links.serverUrl}/${links.repository}/commit/${commit.sha}` : undefined
      },
      commit.message,
      commit.author,
      pr && { text: `${mark}${pr.number}${pr.title ? ` ${pr.title}` : ''}`, url: pr.url }
    ]
  })
  return [{ list: title, headers: ['Commit', 'Message', 'Author', heading], rows }]
}

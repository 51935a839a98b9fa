/**
 * What a change ships: the previous deploy, then the range since (compare), its commits, pull
 * requests and files. At most MAX_API_CALLS calls within a time budget, stopped at once when the
 * run is cancelled; failed calls are one warning, and what was found is kept. Without a token, or
 * when the API left the commits unknown, a push's payload says what it can.
 */
import { compareSince, isFullSha, type Range } from './compare.ts'
import { openGitHub } from './github-client.ts'
import { findPreviousDeploy } from './previous-deploy.ts'
import { pullRequestsIn, readMissingTitles } from './pull-requests.ts'
import { shippedFromPushPayload } from './push-payload.ts'
import { emptyShipped, type LookupOptions, type LookupQuery } from './types.ts'
import type { PreviousDeploy, Shipped } from './types.ts'
import { failureIn, LookupError, lookupWarning, noTokenWarning } from './warning.ts'

export { MAX_API_CALLS } from './github-client.ts'
export type { LookupOptions } from './types.ts'

/** What the stages found: each part is a value one of them returned. */
interface Found {
  previous?: PreviousDeploy
  range?: Range
  titles?: Map<number, string>
  runStartedAt?: string
  apiCalls: number
  failures: LookupError[]
}

const REPOSITORY = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/

export async function lookUpShipped(
  options: LookupOptions
): Promise<{ shipped: Shipped; warning?: string }> {
  const version = options.version.trim()
  const [, owner, repo] = REPOSITORY.exec(options.repository) ?? []
  if (!owner || !version) {
    return {
      shipped: emptyShipped(),
      warning: `Could not look up what this change ships: the repository ("owner/repo") or the version is unknown.`
    }
  }
  const link = `${options.serverUrl}/${options.repository}`
  const shippedOf = ({ previous, range, titles, runStartedAt, apiCalls }: Found): Shipped => {
    const from = previous && encodeURIComponent(previous.sha ?? previous.ref)
    return {
      ...emptyShipped(),
      ...(previous && {
        source: previous.source,
        compareUrl: `${link}/compare/${from}...${encodeURIComponent(version)}`
      }),
      ...(previous?.sha && { previousSha: previous.sha }),
      ...range,
      ...pullRequestsIn(range?.messages ?? [], `${link}/pull/`, undefined, titles),
      ...(runStartedAt && { runStartedAt }),
      apiCalls
    }
  }
  const push = shippedFromPushPayload(options.eventName, options.payload, version)
  const sha = push?.previousSha
  const pushed = sha && { ref: sha, sha, source: 'push-payload' as const }
  if (!options.token) {
    // A previous-version SHA still gives the previous deploy and the compare link.
    const input = options.previousVersion?.trim()
    const given = isFullSha(input) ? { ref: input, sha: input.toLowerCase() } : undefined
    const previous = pushed || (given && { ...given, source: 'input' as const })
    const shipped = shippedOf({ previous, range: push, apiCalls: 0, failures: [] })
    return { shipped, warning: noTokenWarning(!!push, options.advice) }
  }
  const found = await lookUpWithApi({ ...options, version, repo: { owner, repo } }, link)
  // The push payload's account replaces a partial one when the API left the commits unknown.
  const fromPushPayload = !!pushed && found.failures.length > 0 && !found.range
  const shipped = shippedOf(fromPushPayload ? { ...found, previous: pushed, range: push } : found)
  const commitsKnown = shipped.commitCount !== undefined
  const warning = lookupWarning(found.failures, { commitsKnown, fromPushPayload })
  return warning ? { shipped, warning } : { shipped }
}

async function lookUpWithApi(query: LookupQuery, link: string): Promise<Found> {
  const github = await openGitHub(query).catch(failureIn)
  if (github instanceof LookupError) return { apiCalls: 0, failures: [github] }
  try {
    const search = await findPreviousDeploy(github, query)
    const compared = search.previous && (await compareSince(github, query, search.previous))
    const range = compared?.range
    // After a failed later page, titles would most likely fail too, and the warning says why.
    const { pullRequests } = pullRequestsIn(range?.messages ?? [], `${link}/pull/`)
    const read =
      range && !compared.failure ? await readMissingTitles(github, query, pullRequests) : undefined
    const failures = [...search.failures, compared?.failure, read?.failure]
    return {
      ...search,
      ...compared,
      titles: read?.titles,
      apiCalls: github.calls(),
      failures: failures.filter(known => known !== undefined)
    }
  } finally {
    github.close()
  }
}

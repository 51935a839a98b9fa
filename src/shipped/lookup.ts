/**
 * What a change ships: the previous deploy, then the range since (compare), then its commits, pull
 * requests and files, composed here and nowhere else. Never in the way: at most MAX_API_CALLS
 * calls, it returns when its time budget runs out, and failed calls are one warning line, with
 * whatever was found kept. Without a token, or when the API left the commits unknown, a push
 * event's payload says what it can.
 */
import { compareSince, isFullSha, type Range } from './compare.ts'
import { openGitHub } from './github-client.ts'
import { findPreviousDeploy, type PreviousDeploy } from './previous-deploy.ts'
import { pullRequestsIn, readMissingTitles } from './pull-requests.ts'
import { shippedFromPushPayload } from './push-payload.ts'
import { emptyShipped, type LookupOptions, type LookupQuery, type Shipped } from './types.ts'
import { failureIn, lookupWarning, noTokenWarning, type LookupError } from './warning.ts'

export { LOOKUP_BUDGET_MS, MAX_API_CALLS } from './github-client.ts'
export type { LookupAdvice, LookupOptions } from './types.ts'

/** What the stages found, each part a value one of them returned. */
interface Found {
  previous?: PreviousDeploy
  range?: Range
  /** Pull request titles read from the API. */
  titles?: Map<number, string>
  runStartedAt?: string
  failures: LookupError[]
  apiCalls: number
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
  const query: LookupQuery = { ...options, version, repo: { owner, repo } }
  const repositoryUrl = `${options.serverUrl.replace(/\/+$/, '')}/${options.repository}`
  const push = shippedFromPushPayload(options.eventName, options.payload, version)
  const sha = push?.previousSha
  const fromPush = sha && {
    previous: { ref: sha, sha, source: 'push-payload' as const },
    range: push
  }
  if (!options.token) {
    // A previous-version SHA still gives the previous deploy and the compare link.
    const input = options.previousVersion?.trim()
    const given = isFullSha(input) ? { ref: input, sha: input.toLowerCase() } : undefined
    const found = fromPush || { previous: given && { ...given, source: 'input' as const } }
    const shipped = shippedOf(query, repositoryUrl, { ...found, failures: [], apiCalls: 0 })
    return { shipped, warning: noTokenWarning(!!push, options.advice) }
  }
  const found = await lookUpWithApi(query, repositoryUrl)
  // The push payload's account replaces a partial one when the API left the commits unknown.
  const fromPushPayload =
    !!fromPush && found.failures.length > 0 && found.range?.commitCount === undefined
  const shipped = shippedOf(
    query,
    repositoryUrl,
    fromPushPayload ? { ...found, ...fromPush } : found
  )
  const commitsKnown = shipped.commitCount !== undefined
  const warning = lookupWarning(found.failures, { commitsKnown, fromPushPayload })
  return warning ? { shipped, warning } : { shipped }
}

async function lookUpWithApi(query: LookupQuery, repositoryUrl: string): Promise<Found> {
  let github
  try {
    github = await openGitHub(query)
  } catch (error) {
    return { failures: [failureIn(error)], apiCalls: 0 }
  }
  try {
    const search = await findPreviousDeploy(github, query)
    const compared = search.previous && (await compareSince(github, query, search.previous))
    const { range, failure } = compared ?? {}
    // After a failed later page, titles would most likely fail too, and the warning says why.
    const { pullRequests } = pullRequestsIn(range?.messages ?? [], repositoryUrl)
    const read =
      range && !failure ? await readMissingTitles(github, query, pullRequests) : undefined
    const failures = [...search.failures, failure, read?.failure]
    return {
      ...search,
      ...compared,
      titles: read?.titles,
      failures: failures.filter(known => known !== undefined),
      apiCalls: github.calls()
    }
  } finally {
    github.close()
  }
}

function shippedOf(query: LookupQuery, repositoryUrl: string, found: Found): Shipped {
  const { previous, range, runStartedAt } = found
  const from = previous && encodeURIComponent(previous.sha ?? previous.ref)
  const { messages = [], ...counted } = range ?? {}
  return {
    ...emptyShipped(),
    ...(previous && {
      source: previous.source,
      compareUrl: `${repositoryUrl}/compare/${from}...${encodeURIComponent(query.version)}`
    }),
    ...(previous?.sha && { previousSha: previous.sha }),
    ...counted,
    ...pullRequestsIn(messages, repositoryUrl, found.titles),
    ...(runStartedAt && { runStartedAt }),
    apiCalls: found.apiCalls
  }
}

/**
 * What a change ships: the previous deploy, then the range since (compare), its commits, pull
 * requests and files. At most MAX_API_CALLS calls within a time budget, stopped at once when the
 * run is cancelled; failed calls are one warning, and what was found is kept. Without a token, or
 * when the API left the commits unknown, a push's payload says what it can.
 */
import { compareSince, type Range } from './compare.ts'
import { openGitHub } from './github-client.ts'
import { findPreviousDeploy, previousVersionInput } from './previous-deploy.ts'
import { pullRequestsIn, readMissingTitles } from './pull-requests.ts'
import { shippedFromPushPayload } from './push-payload.ts'
import { compareUrl, emptyShipped, type LookupOptions, type LookupQuery } from './types.ts'
import type { Shipped } from './types.ts'
import { failureIn, LookupError, lookupWarning, noTokenWarning } from './warning.ts'

/** What the stages found: each part is a value one of them returned. */
interface GitHubFound extends Awaited<ReturnType<typeof findPreviousDeploy>> {
  range?: Range
  titles?: Map<number, string>
  apiCalls: number
}

const REPOSITORY = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/

export async function lookUpWithGitHub(
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
  const forge = { kind: 'github', web: `${options.serverUrl}/${options.repository}` } as const
  const shippedOf = ({
    previous,
    range,
    titles,
    runStartedAt,
    apiCalls
  }: GitHubFound): Shipped => ({
    ...emptyShipped(),
    ...(previous && {
      source: previous.source,
      compareUrl: compareUrl(forge, previous.sha ?? previous.ref, version)
    }),
    ...(previous?.sha && { previousSha: previous.sha }),
    ...range,
    ...pullRequestsIn(range?.messages ?? [], forge, titles),
    ...(runStartedAt && { runStartedAt }),
    apiCalls
  })
  const push = shippedFromPushPayload(options.eventName, options.payload, version)
  const sha = push?.previousSha
  const pushed = sha && { ref: sha, sha, source: 'push-payload' as const }
  if (!options.token) {
    // A previous-version SHA still gives the previous deploy and the compare link.
    const given = previousVersionInput(options.previousVersion)
    const previous = pushed || (given?.sha ? given : undefined)
    const shipped = shippedOf({ previous, range: push, apiCalls: 0, failures: [] })
    return { shipped, warning: noTokenWarning(!!push, options.advice) }
  }
  const found = await lookUpWithApi({ ...options, version, repo: { owner, repo } })
  // The push payload's account replaces a partial one when the API left the commits unknown.
  const fromPushPayload = !!pushed && found.failures.length > 0 && !found.range
  const shipped = shippedOf(fromPushPayload ? { ...found, previous: pushed, range: push } : found)
  const warning = lookupWarning(found.failures, shipped.commitCount !== undefined, fromPushPayload)
  return warning ? { shipped, warning } : { shipped }
}

async function lookUpWithApi(query: LookupQuery): Promise<GitHubFound> {
  const github = await openGitHub(query).catch(failureIn)
  if (github instanceof LookupError) return { apiCalls: 0, failures: [github] }
  const search = await findPreviousDeploy(github, query)
  const compared = search.previous && (await compareSince(github, query, search.previous))
  const range = compared?.range
  // After a failed later page, titles would most likely fail too, and the warning says why.
  const read =
    range && !compared.failure ? await readMissingTitles(github, query, range.messages) : undefined
  const failures = [...search.failures, compared?.failure, read?.failure]
  return {
    ...search,
    ...compared,
    titles: read?.titles,
    apiCalls: github.calls(),
    failures: failures.filter(known => known !== undefined)
  }
}

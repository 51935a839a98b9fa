/**
 * The one warning line of a lookup that fell short: what failed (the call and its status, in our
 * own words plus GitHub's short message), what is missing and how to fix it. The token never
 * appears: the client removes it from GitHub's message before cutting, and the caller redacts.
 */
import { formatSeconds, plural, withoutFinalStop } from '../text.ts'
import type { ApiFailure } from './api-failure.ts'
import { MAX_GITHUB_RESPONSE_BYTES } from './bounded-fetch.ts'
import type { LookupAdvice } from './types.ts'

/** The permissions a workflow must grant GITHUB_TOKEN for every rule of the lookup. */
export const LOOKUP_PERMISSIONS = '`contents: read`, `actions: read`, `deployments: read`'

export interface WarningContext {
  /** Whether the commits shipped are known despite the failures. */
  commitsKnown: boolean
  /** Whether the commits came from the push payload instead. */
  fromPushPayload: boolean
}

/** One line, or undefined when nothing failed. */
export function lookupWarning(
  failures: readonly ApiFailure[],
  context: WarningContext,
  advice: LookupAdvice
): string | undefined {
  const reported = failures.filter(failure => failure.type !== 'call-limit')
  if (reported.length === 0) return undefined
  const others = reported.length - 1
  const also = others > 0 ? ` (${plural(others, 'other GitHub API call')} failed too)` : ''
  const outcome = context.fromPushPayload
    ? 'The change is recorded with the commits of the push payload instead.'
    : context.commitsKnown
      ? 'The change is recorded with what was found.'
      : 'The change is recorded without the commits it ships.'
  return `Could not look up everything this change ships: ${withoutFinalStop(describeFailure(reported[0], advice))}${also}. ${outcome}`
}

/** A missing token: only the push payload can say anything. */
export function noTokenWarning(fromPushPayload: boolean, advice: LookupAdvice): string {
  const input = advice.tokenInput
  return fromPushPayload
    ? `No ${input}: what this change ships comes from the push payload only. Give the ${input} input (the default, \${{ github.token }}) to look up the previous deploy.`
    : `No ${input}: the change is recorded without the commits it ships. Give the ${input} input (the default, \${{ github.token }}) to look them up.`
}

/** A sentence about one failure: the call, the answer and what to do. */
export function describeFailure(failure: ApiFailure, advice: LookupAdvice): string {
  switch (failure.type) {
    case 'status':
      return describeStatus(failure, advice)
    case 'redirect':
      return `${failure.call} answered a redirect (HTTP ${failure.status}), which is never followed so that the token stays with the API: check GITHUB_API_URL`
    case 'not-json':
      return `${failure.call} answered HTTP ${failure.status} with ${failure.contentType ? `${failure.contentType}, not JSON` : 'a body that is not JSON'}: check GITHUB_API_URL and any proxy in between`
    case 'too-large':
      return `${failure.call} answered more than ${MAX_GITHUB_RESPONSE_BYTES / 1024 / 1024} MiB, which is refused`
    case 'shape':
      return `${failure.call} answered JSON of an unexpected shape (${failure.what}): check GITHUB_API_URL`
    case 'network':
      return `${failure.call} failed with ${failure.code}${failure.proxy ? ` through the proxy ${failure.proxy}` : ''}: the GitHub API could not be reached`
    case 'proxy':
      return `the proxy ${failure.proxy} answered HTTP ${failure.status} to the tunnel for ${failure.call}: ${proxyAdvice(failure.status)}`
    case 'budget':
      return `the GitHub API did not answer ${failure.call} within the lookup's time budget of ${formatSeconds(failure.budgetMs)}`
    case 'refused':
      return `${failure.call} was refused before it was sent: ${failure.reason}`
    case 'call-limit':
      return `${failure.call} was not made: the lookup's call limit was reached`
    case 'invalid-setup':
      return failure.reason
  }
}

function describeStatus(
  failure: Extract<ApiFailure, { type: 'status' }>,
  advice: LookupAdvice
): string {
  const said = failure.message ? ` ("${failure.message}")` : ''
  const answered = `${failure.call} answered HTTP ${failure.status}${said}`
  if (failure.rateLimited) {
    const until = failure.resetAt ? ` until ${failure.resetAt}` : ''
    return `${answered}: the token's GitHub API rate limit is used up${until}; the next run will try again`
  }
  if (failure.status === 401) {
    return `${answered}: the token was not accepted; check the ${advice.tokenInput} input`
  }
  if (failure.status === 403 || failure.status === 404) {
    const permission = neededPermission(failure.call)
    if (
      failure.status === 404 &&
      permission === 'contents: read' &&
      /\/compare\//.test(failure.call)
    ) {
      return `${answered}: a commit of the range is unknown to GitHub (force-pushed away, or a previous-version that names no commit, tag or branch)`
    }
    return `${answered}: the token may lack \`${permission}\`; grant the workflow \`permissions:\` ${LOOKUP_PERMISSIONS}${permission === 'pull-requests: read' ? ' and `pull-requests: read`' : ''}`
  }
  return `${answered}: GitHub could not answer; the next run will try again`
}

function proxyAdvice(status: number): string {
  if (status === 407) return "check the proxy's credentials in HTTPS_PROXY"
  if (status === 403) return "the proxy refuses the API's host: allow it, or add it to NO_PROXY"
  return 'the proxy could not reach the GitHub API'
}

/** The permission an endpoint needs. */
function neededPermission(call: string): string {
  if (/\/actions\//.test(call)) return 'actions: read'
  if (/\/deployments(\/|$)/.test(call)) return 'deployments: read'
  if (/\/pulls\//.test(call)) return 'pull-requests: read'
  return 'contents: read'
}

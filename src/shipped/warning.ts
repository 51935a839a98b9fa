/**
 * The lookup's failures in one place: a failed call as one sentence (the call, the answer, what to
 * do), and the one warning line of a lookup that fell short.
 */
import { collapseWhitespace, plural, withoutFinalStop } from '../helpers/text.ts'
import type { LookupAdvice } from './types.ts'

/** The permissions a workflow must grant GITHUB_TOKEN for every rule of the lookup. */
export const LOOKUP_PERMISSIONS = '`contents: read`, `actions: read`, `deployments: read`'

/** A call that failed, in words. */
export class LookupError extends Error {
  /** Every other call would fail too (401, rate limit, time budget, network): stop calling. */
  readonly final: boolean
  constructor(sentence: string, final = true) {
    super(sentence)
    this.final = final
  }
}

/** The failure of a call; anything else (a programming error) is thrown on. */
export function failureIn(error: unknown): LookupError {
  if (error instanceof LookupError) return error
  throw error
}

/**
 * Octokit's RequestError for `call` ("GET /repos/o/r/releases"), or any error under it, in words;
 * `proxy` is the proxy in use ("host:port"). GitHub's message is quoted whole: the Report redacts
 * the token from it, and cuts the line.
 */
export function callFailure(
  error: unknown,
  call: string,
  { proxy, advice }: { proxy?: string; advice: LookupAdvice }
): LookupError {
  const { status, response } = error as {
    status?: number
    response?: { data?: { message?: unknown }; headers: Record<string, string | undefined> }
  }
  if (status === undefined || !response) {
    const causes: Error[] = []
    for (let at = error; at instanceof Error && causes.length < 10; at = at.cause) causes.push(at)
    // undici's words, deep in the causes, when a proxy answers CONNECT with anything but 200.
    const tunnel = /Proxy response \((\d{3})\)/.exec(causes.map(at => at.message).join('\n'))?.[1]
    const through = proxy ? ` through the proxy ${proxy}` : ''
    return new LookupError(
      proxy && tunnel
        ? `the proxy ${proxy} answered HTTP ${tunnel} to the tunnel for ${call}: ${proxyAdvice(tunnel)}`
        : `${call} failed with ${errorCode(causes)}${through}: the GitHub API could not be reached`
    )
  }
  const said = response.data?.message
  const message = typeof said === 'string' ? collapseWhitespace(said) : ''
  const quoted = message ? ` ("${message}")` : ''
  // GitHub signals a used-up rate limit by x-ratelimit-remaining: 0 (primary) or Retry-After (secondary).
  const { 'x-ratelimit-remaining': remaining, 'retry-after': retryAfter } = response.headers
  const rateLimited = status === 429 || (status === 403 && (remaining === '0' || !!retryAfter))
  // A reset beyond what a Date holds (or not a number) is not said rather than thrown on.
  const reset = new Date(Number(response.headers['x-ratelimit-reset']) * 1000)
  const until = reset.getTime() > 0 ? ` until ${reset.toISOString()}` : ''
  const todo = rateLimited
    ? `the token's GitHub API rate limit is used up${until}; the next run will try again`
    : answerAdvice(status, call, advice)
  return new LookupError(
    `${call} answered HTTP ${status}${quoted}: ${todo}`,
    rateLimited || status === 401
  )
}

function answerAdvice(status: number, call: string, { tokenInput }: LookupAdvice): string {
  if (status === 401) return `the token was not accepted; check the ${tokenInput} input`
  if (status === 404 && /\/compare\//.test(call)) {
    return 'a commit of the range is unknown to GitHub (force-pushed away, or a previous-version that names no commit, tag or branch)'
  }
  if (status !== 403 && status !== 404)
    return 'GitHub could not answer; the next run will try again'
  // The permission an endpoint needs, by its part of the repository's API.
  const area = /^\S+ \/repos\/[^/]+\/[^/]+\/(actions|deployments|pulls)\b/.exec(call)?.[1]
  const permission = area === 'pulls' ? 'pull-requests: read' : `${area ?? 'contents'}: read`
  const pulls = permission === 'pull-requests: read' ? ' and `pull-requests: read`' : ''
  return `the token may lack \`${permission}\`; grant the workflow \`permissions:\` ${LOOKUP_PERMISSIONS}${pulls}`
}

function proxyAdvice(status: string): string {
  if (status === '407') return "check the proxy's credentials in HTTPS_PROXY"
  if (status === '403') return "the proxy refuses the API's host: allow it, or add it to NO_PROXY"
  return 'the proxy could not reach the GitHub API'
}

/** The system's code ("ECONNRESET") when a cause has one, else the innermost code or name. */
function errorCode(causes: Error[]): string {
  const codes = causes
    .map(at => (at as { code?: unknown }).code)
    .filter(code => typeof code === 'string')
  return (
    codes.find(code => /^E[A-Z]+$/.test(code)) ?? codes.at(-1) ?? causes.at(-1)?.name ?? 'an error'
  )
}

/** One line, or undefined when nothing failed; `fromPushPayload` when its commits were taken. */
export function lookupWarning(
  failures: readonly LookupError[],
  commitsKnown: boolean,
  fromPushPayload = false
): string | undefined {
  if (failures.length === 0) return undefined
  const others = failures.length - 1
  const also = others > 0 ? ` (${plural(others, 'other GitHub API call')} failed too)` : ''
  const found = commitsKnown ? 'with what was found' : 'without the commits it ships'
  const outcome = fromPushPayload ? 'with the commits of the push payload instead' : found
  return `Could not look up everything this change ships: ${withoutFinalStop(failures[0].message)}${also}. The change is recorded ${outcome}.`
}

/** A missing token: only the push payload can say anything. */
export function noTokenWarning(fromPushPayload: boolean, { tokenInput }: LookupAdvice): string {
  return fromPushPayload
    ? `No ${tokenInput}: what this change ships comes from the push payload only. Give the ${tokenInput} input (the default, \${{ github.token }}) to look up the previous deploy.`
    : `No ${tokenInput}: the change is recorded without the commits it ships. Give the ${tokenInput} input (the default, \${{ github.token }}) to look them up.`
}

/**
 * The lookup's GitHub API: @actions/github's Octokit as getOctokit gives it (loaded only when a
 * lookup calls, with the toolkit's own proxy rules), and one request hook for what the lookup
 * adds: at most MAX_API_CALLS calls, one signal every call carries (the time budget's, and the
 * caller's for a cancelled run), redirects never followed, and each failure as one LookupError
 * naming the call.
 */
import { getProxyUrl } from '@actions/http-client/lib/proxy'
import { hostPort } from '../service/request.ts'
import { ACTION_NAME, ACTION_VERSION } from '../package.ts'
import { formatSeconds } from '../helpers/text.ts'
import { LOOKUP_BUDGET_MS, type LookupOptions } from './types.ts'
import { callFailure, LookupError } from './warning.ts'

/**
 * At most this many GitHub API calls per lookup, whatever the history. The previous deploy takes 2
 * on the usual path (at most 6), the compare pages the rest, 250 commits each (a range of up to
 * 2,500 commits is read whole), and titles what is left, at most 3.
 */
export const MAX_API_CALLS = 12
/** The REST API version the calls are written for. */
const GITHUB_API_VERSION = '2022-11-28'
/** Octokit would print deprecation notices, outside text, straight to the workflow log. */
const SILENT = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} }

export type GitHub = Awaited<ReturnType<typeof openGitHub>>

/** Throws a LookupError for an API URL the token must not go to. */
export async function openGitHub(
  options: Pick<LookupOptions, 'apiUrl' | 'token' | 'advice' | 'budgetMs' | 'signal'> & {
    maxCalls?: number
  }
) {
  const { apiUrl, token, budgetMs = LOOKUP_BUDGET_MS, maxCalls = MAX_API_CALLS } = options
  const url = URL.parse(apiUrl)
  if (url?.protocol !== 'https:') {
    const problem = url
      ? `uses ${url.protocol}, not https:, and the token is never sent unencrypted`
      : 'is not a URL'
    throw new LookupError(`GITHUB_API_URL ${problem}`)
  }
  if (url.username || url.password) throw new LookupError('GITHUB_API_URL holds credentials')
  const { getOctokit } = await import('@actions/github')
  const octokit = getOctokit(token, {
    baseUrl: apiUrl,
    userAgent: `${ACTION_NAME}/${ACTION_VERSION}`,
    log: SILENT
  })
  const cancelled = options.signal
  const signal = AbortSignal.any([AbortSignal.timeout(budgetMs), ...(cancelled ? [cancelled] : [])])
  // The proxy the toolkit will use for the API, as messages name it.
  const proxy = getProxyUrl(url)
  const wording = { proxy: proxy?.hostname ? hostPort(proxy) : undefined, advice: options.advice }
  let calls = 0

  octokit.hook.wrap('request', async (request, endpoint) => {
    const path = octokit.request.endpoint.parse(endpoint).url.slice(apiUrl.length).split('?')[0]
    const call = `${endpoint.method} ${path}`
    const late = () =>
      new LookupError(
        cancelled?.aborted
          ? `the run was cancelled before ${call} was answered`
          : `the GitHub API did not answer ${call} within the lookup's time budget of ${formatSeconds(budgetMs)}`
      )
    if (signal.aborted) throw late()
    if (calls >= maxCalls)
      throw new LookupError(`${call} was not made: the lookup's call limit was reached`)
    calls++
    // Set on the options every hook shares, and merged per call into the toolkit's request
    // defaults (its proxy-aware fetch), which a `request` option of getOctokit would replace.
    endpoint.headers = { ...endpoint.headers, 'x-github-api-version': GITHUB_API_VERSION }
    endpoint.request = { ...endpoint.request, signal, redirect: 'manual', log: SILENT }
    let response
    try {
      response = await request(endpoint)
    } catch (error) {
      throw signal.aborted ? late() : callFailure(error, call, wording)
    }
    const { status, data, headers } = response
    if (signal.aborted) throw late()
    if (status >= 300) {
      throw new LookupError(
        `${call} answered a redirect (HTTP ${status}), which is never followed so that the token stays with the API: check GITHUB_API_URL`
      )
    }
    if (typeof data === 'string') {
      const type = headers['content-type']?.split(';')[0].trim()
      throw new LookupError(
        `${call} answered HTTP ${status} with ${type ? `${type}, not JSON` : 'a body that is not JSON'}: check GITHUB_API_URL and any proxy in between`
      )
    }
    return response
  })

  return {
    octokit,
    /** Aborted when the time budget runs out or the run is cancelled. */
    signal,
    calls: () => calls,
    callsLeft: () => maxCalls - calls
  }
}

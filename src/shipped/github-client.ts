/**
 * The lookup's GitHub API, through @actions/github's Octokit (loaded on the first call, so that a
 * run that makes none never loads it), with what the action adds around it: the token goes only
 * to the API's origin below its path prefix (GitHub Enterprise Server's /api/v3), at most
 * MAX_API_CALLS calls, one time budget for them all that also ends calls in flight, bounded
 * answers (bounded-fetch.ts), and every failure turned into one ApiFailure naming the call.
 */
import type { getOctokit } from '@actions/github'
import { Redactor } from '../redact.ts'
import { truncateText } from '../text.ts'
import { ApiError } from './api-failure.ts'
import { boundedFetch } from './bounded-fetch.ts'
import { proxyFetchFor, type ProxyFetch } from './proxy-fetch.ts'
import { errorCode, failureOfRequest } from './request-failure.ts'
import { untrusted, type Untrusted } from './untrusted.ts'

/** At most this many GitHub API calls per lookup, whatever the history: no paging through all of it. */
export const MAX_API_CALLS = 6
/** The whole lookup's time: the change is sent when it runs out, so a slow API never holds a deploy. */
export const LOOKUP_BUDGET_MS = 10_000
/** The REST API version the calls are written for. */
export const GITHUB_API_VERSION = '2022-11-28'
/** A longer request URL is not sent: servers refuse them, and no call of the lookup needs one. */
export const MAX_URL_CHARS = 8 * 1024

const USER_AGENT = 'change-tracking-action'
/** A call's name in a message is cut to this: a path built from a long input stays readable. */
const MAX_CALL_NAME_CHARS = 200

export type Octokit = ReturnType<typeof getOctokit>

export interface GitHubClientOptions {
  /** GITHUB_API_URL: https, possibly with a path prefix (GitHub Enterprise Server's /api/v3). */
  apiUrl: string
  token: string
  budgetMs?: number
  maxCalls?: number
}

/** A 2XX answer: its JSON as its documented type, untrusted, and its Link header. */
export interface Answer<T> {
  data: Untrusted<T>
  link?: string
}

interface OctokitAnswer<T> {
  data: T
  headers: Record<string, unknown>
}

/** The options Octokit hands a request hook: enough of them to name and admit the call. */
interface HookOptions {
  method?: string
  headers?: Record<string, string | number | undefined>
}

export class GitHubClient {
  private readonly root: URL
  private readonly token: string
  private readonly redactor = new Redactor()
  private readonly maxCalls: number
  private readonly budgetMs: number
  private readonly controller = new AbortController()
  private readonly timer: NodeJS.Timeout
  private callsMade = 0
  private loaded?: Promise<{ octokit: Octokit; proxy: ProxyFetch }>
  private proxy?: ProxyFetch
  private closed = false

  /** Throws ApiError ('invalid-setup') for an API URL the token must not go to. */
  constructor(options: GitHubClientOptions) {
    this.root = apiRoot(options.apiUrl)
    this.token = options.token
    this.redactor.add(options.token)
    this.maxCalls = options.maxCalls ?? MAX_API_CALLS
    this.budgetMs = options.budgetMs ?? LOOKUP_BUDGET_MS
    this.timer = setTimeout(() => this.controller.abort(), this.budgetMs)
  }

  /** Calls made so far (each page counts once it is sent). */
  get calls(): number {
    return this.callsMade
  }

  get remainingCalls(): number {
    return this.maxCalls - this.callsMade
  }

  get timedOut(): boolean {
    return this.controller.signal.aborted
  }

  /** "GET /repos/o/r/compare/a...b": a call's name in messages (below the API root, no query). */
  callName(url: URL | string, method = 'GET'): string {
    let path: string
    try {
      const parsed = new URL(url)
      path = parsed.pathname.startsWith(this.root.pathname)
        ? `/${parsed.pathname.slice(this.root.pathname.length)}`
        : `${parsed.origin}${parsed.pathname}`
    } catch {
      path = String(url)
    }
    return truncateText(`${method} ${path}`, MAX_CALL_NAME_CHARS)
  }

  /** A call's name from its path below the API root ('repos/o/r/releases'). */
  pathCallName(path: string): string {
    return truncateText(`GET /${path.replace(/^\/+/, '')}`, MAX_CALL_NAME_CHARS)
  }

  /**
   * Whether a URL (from a Link header) is below the API root, where the token may go: judged on
   * the path as the server will read it, so that an encoded "..%2f" cannot climb out of it.
   */
  isBelowRoot(url: URL): boolean {
    if (url.origin !== this.root.origin || url.username || url.password) return false
    let decoded: string
    try {
      decoded = decodeURIComponent(url.pathname)
    } catch {
      return false
    }
    const segments = decoded.split(/[/\\]/)
    return (
      decoded.startsWith(this.root.pathname) &&
      !segments.some(segment => segment === '..' || segment === '.')
    )
  }

  /** One call through Octokit's typed methods; throws ApiError. */
  async call<T>(request: (octokit: Octokit) => Promise<OctokitAnswer<T>>): Promise<Answer<T>> {
    const { octokit } = await this.load()
    let response: OctokitAnswer<T>
    try {
      response = await request(octokit)
    } catch (error) {
      throw error instanceof ApiError ? error : this.unexpected(error)
    }
    const link = response.headers['link']
    return {
      data: untrusted<T>(response.data),
      ...(typeof link === 'string' ? { link } : {})
    }
  }

  /** A GET of a full URL (a Link header's), below the API root only; throws ApiError. */
  getUrl(url: URL): Promise<Answer<unknown>> {
    if (!this.isBelowRoot(url)) {
      // Never sent, so never counted: the token stays with the API.
      return Promise.reject(
        new ApiError({
          type: 'refused',
          call: this.callName(url),
          reason: 'the link leads outside the API root'
        })
      )
    }
    // Octokit reads {braces} in a URL as template parameters: a link's own are kept as text.
    const href = url.href.replace(/[{}]/g, brace => encodeURIComponent(brace))
    return this.call(octokit => octokit.request({ method: 'GET', url: href }))
  }

  /** Stops the budget timer, ends any call in flight and closes the proxy's connections. */
  close(): void {
    this.closed = true
    clearTimeout(this.timer)
    this.controller.abort()
    this.proxy?.close()
  }

  private load(): Promise<{ octokit: Octokit; proxy: ProxyFetch }> {
    this.loaded ??= this.createOctokit()
    return this.loaded
  }

  private async createOctokit(): Promise<{ octokit: Octokit; proxy: ProxyFetch }> {
    let github: typeof import('@actions/github')
    try {
      github = await import('@actions/github')
    } catch {
      throw new ApiError({
        type: 'invalid-setup',
        reason:
          "the GitHub toolkit (@actions/github) could not be loaded: the action's bundle is incomplete"
      })
    }
    const proxy = await proxyFetchFor(this.root)
    this.proxy = proxy
    if (this.closed) proxy.close()
    const octokit = github.getOctokit(this.token, {
      baseUrl: this.root.href.replace(/\/$/, ''),
      userAgent: USER_AGENT,
      // Octokit would print deprecation notices of outside text to the workflow log.
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      request: {
        fetch: boundedFetch(proxy.fetch, url => this.callName(url)),
        signal: this.controller.signal,
        redirect: 'manual'
      }
    })
    octokit.hook.wrap('request', async (request, options) => {
      const hookOptions = options as HookOptions
      const url = (octokit.request.endpoint.parse(options as never) as { url: string }).url
      const call = this.callName(url, hookOptions.method)
      this.admit(url, call)
      this.callsMade++
      hookOptions.headers = {
        ...hookOptions.headers,
        accept: 'application/vnd.github+json',
        'x-github-api-version': GITHUB_API_VERSION
      }
      let response
      try {
        response = await request(options)
      } catch (error) {
        throw new ApiError(
          failureOfRequest(error, {
            call,
            proxy: proxy.proxy,
            budgetMs: this.timedOut ? this.budgetMs : undefined,
            redact: text => this.redactor.redact(text)
          })
        )
      }
      if (typeof response.data === 'string') {
        const contentType = response.headers['content-type']
        throw new ApiError({
          type: 'not-json',
          call,
          status: response.status,
          ...(typeof contentType === 'string'
            ? { contentType: contentType.split(';')[0].trim() }
            : {})
        })
      }
      return response
    })
    return { octokit, proxy }
  }

  /** Throws when the call may not be made: a URL outside the root or too long, no time, no calls. */
  private admit(url: string, call: string): void {
    let parsed: URL | undefined
    try {
      parsed = new URL(url)
    } catch {
      parsed = undefined
    }
    if (!parsed || !this.isBelowRoot(parsed)) {
      throw new ApiError({ type: 'refused', call, reason: 'its URL is outside the API root' })
    }
    if (url.length > MAX_URL_CHARS) {
      throw new ApiError({
        type: 'refused',
        call,
        reason: `its URL is longer than ${MAX_URL_CHARS} characters`
      })
    }
    if (this.timedOut) throw new ApiError({ type: 'budget', call, budgetMs: this.budgetMs })
    if (this.callsMade >= this.maxCalls) throw new ApiError({ type: 'call-limit', call })
  }

  private unexpected(error: unknown): ApiError {
    return new ApiError({ type: 'network', call: 'a GitHub API call', code: errorCode(error) })
  }
}

/** The API root as a URL ending in '/', https only, without credentials, query or fragment. */
function apiRoot(apiUrl: string): URL {
  let root: URL
  try {
    root = new URL(apiUrl)
  } catch {
    throw new ApiError({ type: 'invalid-setup', reason: 'GITHUB_API_URL is not a URL' })
  }
  if (root.protocol !== 'https:') {
    throw new ApiError({
      type: 'invalid-setup',
      reason: `GITHUB_API_URL uses ${root.protocol}, not https:, and the token is never sent unencrypted`
    })
  }
  if (root.username || root.password) {
    throw new ApiError({ type: 'invalid-setup', reason: 'GITHUB_API_URL holds credentials' })
  }
  root.search = ''
  root.hash = ''
  if (!root.pathname.endsWith('/')) root.pathname += '/'
  return root
}

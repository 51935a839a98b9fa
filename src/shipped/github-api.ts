/**
 * A small client for the few read-only GitHub REST calls of the lookup. It owns the token, the
 * call limit, the time budget and the sockets: the token goes only to the API's origin (below its
 * path prefix, for GitHub Enterprise Server's /api/v3), redirects are never followed, every
 * request is aborted when the budget runs out, and close() leaves no socket behind.
 *
 * Why not @actions/github or @actions/http-client: both load undici, and bundled they weigh
 * 1.14 MB and 0.95 MB of JavaScript, more than the whole action may (1 MB). node:https does the
 * few GETs we need, and nock intercepts it in tests. Proxies follow the service's rules
 * (proxy-tunnel.ts); a call through a proxy gets its own tunnel, closed when the call ends.
 */
import * as https from 'node:https'
import { isIP, type Socket } from 'node:net'
import * as tls from 'node:tls'
import { openTunnel, proxyFor, TunnelRefused, type Proxy } from './proxy-tunnel.ts'
import { parseJsonSafely } from '../json.ts'
import { Redactor } from '../redact.ts'
import { collapseWhitespace, truncateText } from '../text.ts'

/** At most this many GitHub API calls per lookup, whatever the history: no paging through all of it. */
export const MAX_API_CALLS = 6
/** The whole lookup's time: the change is sent when it runs out, so a slow API never holds a deploy. */
export const LOOKUP_BUDGET_MS = 10_000
/** A bigger answer is refused: a compare of 250 commits and 300 files is far smaller. */
export const MAX_GITHUB_RESPONSE_BYTES = 10 * 1024 * 1024
/** The REST API version the calls are written for. */
export const GITHUB_API_VERSION = '2022-11-28'

const USER_AGENT = 'change-tracking-action'

/** Why a call failed. */
export type ApiFailure =
  | {
      type: 'status'
      call: string
      status: number
      /** GitHub's own message, collapsed and cut; never holds the token. */
      message?: string
      /** The rate limit is exhausted (403 or 429 with x-ratelimit-remaining: 0, or Retry-After). */
      rateLimited: boolean
      /** When the rate limit resets, ISO 8601, when GitHub said. */
      resetAt?: string
    }
  | { type: 'redirect'; call: string; status: number }
  | { type: 'not-json'; call: string; status: number; contentType?: string }
  | { type: 'too-large'; call: string }
  | { type: 'shape'; call: string; what: string }
  | { type: 'network'; call: string; code: string; proxy?: string }
  | { type: 'proxy'; call: string; proxy: string; status: number }
  | { type: 'budget'; call: string; budgetMs: number }
  | { type: 'call-limit'; call: string }
  | { type: 'invalid-setup'; reason: string }

export class ApiError extends Error {
  readonly failure: ApiFailure
  constructor(failure: ApiFailure) {
    super(failure.type)
    this.name = 'ApiError'
    this.failure = failure
  }
}

export interface ApiResponse {
  status: number
  /** The parsed JSON body. */
  body: unknown
  /** The Link header, for pagination. */
  link?: string
}

export interface GitHubApiOptions {
  /** GITHUB_API_URL: https, possibly with a path prefix (GitHub Enterprise Server's /api/v3). */
  apiUrl: string
  token: string
  budgetMs?: number
  maxCalls?: number
}

/** GitHub's messages are short; anything longer is cut (after the token is removed). */
const MAX_MESSAGE_EXCERPT_CHARS = 120

export class GitHubApi {
  private readonly root: URL
  private readonly token: string
  private readonly redactor = new Redactor()
  private readonly maxCalls: number
  private readonly budgetMs: number
  /** Direct connections only: a call through a proxy has its own tunnel. */
  private readonly agent: https.Agent
  private readonly proxyInUse?: Proxy
  private readonly controller = new AbortController()
  private readonly timer: NodeJS.Timeout
  /** "host:port" of the proxy in use, for messages; never its credentials. */
  readonly proxy?: string
  private callsMade = 0

  constructor(options: GitHubApiOptions) {
    this.root = apiRoot(options.apiUrl)
    this.token = options.token
    this.redactor.add(options.token)
    this.maxCalls = options.maxCalls ?? MAX_API_CALLS
    this.budgetMs = options.budgetMs ?? LOOKUP_BUDGET_MS
    this.timer = setTimeout(() => this.controller.abort(), this.budgetMs)
    this.proxyInUse = proxyFor(this.root)
    this.proxy = this.proxyInUse?.name
    // Idle keep-alive sockets are unref'd by Node, and close() destroys them.
    this.agent = new https.Agent({ keepAlive: true })
  }

  /** Calls made so far (each page and each refused-for-time attempt counts once it is sent). */
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
  callName(url: URL): string {
    return `GET /${url.pathname.slice(this.root.pathname.length)}`
  }

  /** The URL of a path below the API root ('repos/o/r/releases'), with its query. */
  url(path: string, query: Record<string, string | number> = {}): URL {
    const url = new URL(path.replace(/^\/+/, ''), this.root)
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, String(value))
    return url
  }

  /** Whether a URL (from a Link header) is below the API root, where the token may go. */
  isBelowRoot(url: URL): boolean {
    return url.origin === this.root.origin && url.pathname.startsWith(this.root.pathname)
  }

  get(path: string, query?: Record<string, string | number>): Promise<ApiResponse> {
    return this.getUrl(this.url(path, query))
  }

  /** One GET; resolves with a 2XX JSON answer, throws ApiError otherwise. */
  async getUrl(url: URL): Promise<ApiResponse> {
    const call = this.callName(url)
    if (!this.isBelowRoot(url)) {
      throw new ApiError({ type: 'shape', call, what: 'a link outside the API root' })
    }
    if (this.timedOut) throw new ApiError({ type: 'budget', call, budgetMs: this.budgetMs })
    if (this.callsMade >= this.maxCalls) throw new ApiError({ type: 'call-limit', call })
    this.callsMade++
    let raw
    try {
      raw = await this.request(url, call)
    } catch (error) {
      if (error instanceof ApiError) throw error
      // https.request itself threw (a bad option, an interceptor): still one failure, named.
      const code = (error as NodeJS.ErrnoException)?.code ?? (error as Error)?.name ?? 'an error'
      throw new ApiError({ type: 'network', call, code, proxy: this.proxy })
    }
    const { status, headers } = raw
    if (status >= 300 && status < 400) throw new ApiError({ type: 'redirect', call, status })
    const body = parseJsonSafely(raw.body)
    if (status < 200 || status >= 300) {
      throw new ApiError({
        type: 'status',
        call,
        status,
        message: this.messageExcerpt(body),
        ...rateLimit(status, headers)
      })
    }
    if (body === undefined) {
      const contentType = headerValue(headers['content-type'])?.split(';')[0]?.trim()
      throw new ApiError({ type: 'not-json', call, status, contentType })
    }
    return { status, body, link: headerValue(headers.link) }
  }

  /** Closes every socket, pending or idle, and stops the budget timer. Idempotent. */
  close(): void {
    clearTimeout(this.timer)
    this.controller.abort()
    this.agent.destroy()
  }

  private async request(url: URL, call: string): Promise<RawResponse> {
    if (!this.proxyInUse) return this.exchange(url, call)
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    let tunnel: Socket
    try {
      tunnel = await openTunnel(
        this.proxyInUse,
        host,
        Number(url.port) || 443,
        this.controller.signal
      )
    } catch (error) {
      if (this.timedOut) throw new ApiError({ type: 'budget', call, budgetMs: this.budgetMs })
      if (error instanceof TunnelRefused) {
        throw new ApiError({
          type: 'proxy',
          call,
          proxy: this.proxyInUse.name,
          status: error.status
        })
      }
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).name
      throw new ApiError({ type: 'network', call, code, proxy: this.proxyInUse.name })
    }
    try {
      return await this.exchange(url, call, tunnel)
    } finally {
      tunnel.destroy()
    }
  }

  /** One GET over a direct connection, or over a tunnel. */
  private exchange(url: URL, call: string, tunnel?: Socket): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const signal = this.controller.signal
      const chunks: Buffer[] = []
      let received = 0
      let settled = false
      const finish = (outcome: () => void): void => {
        if (settled) return
        settled = true
        signal.removeEventListener('abort', onAbort)
        outcome()
      }
      const fail = (failure: ApiFailure): void =>
        finish(() => {
          reject(new ApiError(failure))
          req.destroy()
        })
      const onAbort = (): void => fail({ type: 'budget', call, budgetMs: this.budgetMs })

      const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
      const req = https.request(url, {
        method: 'GET',
        ...(tunnel
          ? {
              createConnection: () =>
                tls.connect({
                  socket: tunnel,
                  host,
                  ...(isIP(host) ? {} : { servername: host }),
                  ALPNProtocols: ['http/1.1']
                })
            }
          : { agent: this.agent }),
        headers: {
          Authorization: `Bearer ${this.token}`,
          Accept: 'application/vnd.github+json',
          'X-GitHub-Api-Version': GITHUB_API_VERSION,
          'User-Agent': USER_AGENT
        }
      })
      signal.addEventListener('abort', onAbort)
      req.on('error', (error: NodeJS.ErrnoException) =>
        fail({ type: 'network', call, code: error.code ?? error.name, proxy: this.proxy })
      )
      req.on('response', res => {
        res.on('error', (error: NodeJS.ErrnoException) =>
          fail({ type: 'network', call, code: error.code ?? error.name, proxy: this.proxy })
        )
        res.on('data', (chunk: Buffer) => {
          received += chunk.byteLength
          if (received > MAX_GITHUB_RESPONSE_BYTES) fail({ type: 'too-large', call })
          else chunks.push(chunk)
        })
        res.on('end', () =>
          finish(() =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks)
            })
          )
        )
      })
      req.end()
    })
  }

  /** GitHub's `message`, without the token, collapsed and then cut. */
  private messageExcerpt(body: unknown): string | undefined {
    if (typeof body !== 'object' || body === null) return undefined
    const message = (body as { message?: unknown }).message
    if (typeof message !== 'string') return undefined
    // Removed before cutting (in every encoded form too): a cut must never leave part of it.
    const collapsed = collapseWhitespace(this.redactor.redact(message))
    return collapsed ? truncateText(collapsed, MAX_MESSAGE_EXCERPT_CHARS) : undefined
  }
}

interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
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

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value
}

/** GitHub signals an exhausted rate limit by x-ratelimit-remaining: 0 (primary) or Retry-After (secondary). */
function rateLimit(
  status: number,
  headers: Record<string, string | string[] | undefined>
): { rateLimited: boolean; resetAt?: string } {
  if (status !== 403 && status !== 429) return { rateLimited: false }
  const remaining = headerValue(headers['x-ratelimit-remaining'])
  const retryAfter = headerValue(headers['retry-after'])
  const rateLimited = status === 429 || remaining === '0' || retryAfter !== undefined
  const reset = Number(headerValue(headers['x-ratelimit-reset']))
  const resetAt =
    rateLimited && Number.isInteger(reset) && reset > 0
      ? new Date(reset * 1000).toISOString()
      : undefined
  return { rateLimited, ...(resetAt ? { resetAt } : {}) }
}

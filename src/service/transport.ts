/**
 * The HTTPS transport under the service client. It owns everything about getting a request to
 * the service and an answer back: TLS, proxies, per-attempt deadlines, retries with backoff,
 * Retry-After, redirects (never followed), response size limits, failure classification and
 * redaction of the API key from every message. It knows nothing about specific endpoints.
 *
 * It uses node:https directly rather than @actions/http-client: that package's entry point loads
 * undici (~450 KB of bundle and noticeable cold start), and we need control over redirects and a
 * deadline that covers a whole attempt. Proxy handling follows @actions/http-client: its
 * getProxyUrl (https_proxy / HTTPS_PROXY, no_proxy / NO_PROXY, loopback always direct) and a
 * `tunnel` CONNECT agent.
 */
import { STATUS_CODES, type Agent, type ClientRequest, type IncomingHttpHeaders } from 'node:http'
import * as https from 'node:https'
import { getProxyUrl } from '@actions/http-client/lib/proxy'
import { Inputs } from '../action/names.ts'
import { BACKOFF_BASE_MS, BACKOFF_MAX_MS, RETRY_AFTER_MAX_MS } from './retry.ts'
import { InputError, ServiceError, type ServiceErrorDetails } from '../errors.ts'
import type { Redactor } from '../redact.ts'

/** The header that carries the API key; the key goes nowhere else. */
export const API_KEY_HEADER = 'X-Service-ApiKey'
/** A response body larger than this is cut off: the service never needs to send more. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024

export type HttpMethod = 'GET' | 'POST'

export interface ServiceRequest {
  method: HttpMethod
  /** Path below the service root, already percent-encoded, no leading slash: 'v2/change', 'v1/heartbeat/a%2Fb'. */
  path: string
  /** Query string, already encoded, without '?'. */
  query?: string
  body?: string | Uint8Array
  contentType?: string
  /** Extra advice for specific statuses, e.g. { 404: 'No change has that id.' }. */
  hints?: Partial<Record<number, string>>
}

export interface ServiceResponse {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

export interface TransportOptions {
  /** The service root: https, ending with '/', possibly with a path prefix ('https://host/api/'). */
  baseUrl: URL
  apiKey: string
  /** Bounds each attempt as a whole: connect, TLS, upload and the full response. */
  timeoutMs: number
  /** Total attempts, at least 1. */
  maxAttempts: number
  userAgent: string
  /** The transport adds apiKey to it. */
  redactor: Redactor
  /** One line per retry, e.g. "POST /v2/change: HTTP 503 Service Unavailable; retry 2 of 4 in 1.3 s". */
  log?: (message: string) => void
  /** Injectable for tests. */
  sleep?: (ms: number) => Promise<void>
  /** Injectable for tests (jitter); returns a number in [0, 1). */
  random?: () => number
  backoffBaseMs?: number
  backoffMaxMs?: number
  retryAfterMaxMs?: number
  /** Defaults to MAX_RESPONSE_BYTES; smaller in tests. */
  maxResponseBytes?: number
}

/** The parts of the retry policy that decide how long to wait. */
export interface RetryDelayPolicy {
  backoffBaseMs: number
  backoffMaxMs: number
  retryAfterMaxMs: number
  random: () => number
}

/**
 * How long to wait after failed attempt number `attempt` (1-based) before the next one.
 *
 * Without Retry-After: exponential backoff with full jitter,
 * random() * min(backoffMaxMs, backoffBaseMs * 2^(attempt-1)).
 * With a valid Retry-After (delay-seconds or an HTTP-date, relative to `now`): that delay,
 * at least 0 and at most retryAfterMaxMs, instead of the jittered wait.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterHeader: string | undefined,
  now: number,
  policy: RetryDelayPolicy
): number {
  const retryAfter = parseRetryAfterMs(retryAfterHeader, now)
  if (retryAfter !== undefined) return Math.min(Math.max(retryAfter, 0), policy.retryAfterMaxMs)
  const ceiling = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** (attempt - 1))
  return Math.round(policy.random() * ceiling)
}

/** A Retry-After header as milliseconds from `now`; undefined when absent or not valid. */
export function parseRetryAfterMs(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined
  const value = header.trim()
  if (value === '') return undefined
  // delay-seconds is 1*DIGIT (RFC 9110); anything else numeric-looking ("1.5", "-3") is invalid.
  if (/^\d+$/.test(value)) return Number(value) * 1000
  // An HTTP-date starts with a weekday name; Date.parse alone accepts too much ("5", "-3").
  if (!/^[A-Za-z]{3,9},? /.test(value)) return undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : date - now
}

/** Network error codes that mean "try again": the service or the path to it had a moment. */
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN'
])

/** Certificate verification failures: retrying cannot help, and the fix is configuration. */
const CERTIFICATE_ERROR_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_REVOKED',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID'
])

/** Marks an attempt that ran out of time. */
class AttemptTimeout extends Error {
  readonly code = 'ATTEMPT_TIMEOUT'
}

/** Why one attempt failed, and whether another may help. */
type Failure =
  | { type: 'status'; response: ServiceResponse; retryable: boolean }
  | { type: 'timeout'; retryable: true }
  | { type: 'network'; code: string; message: string; retryable: boolean }

const defaultSleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/**
 * Sends requests to the service with retries.
 *
 * Worst case for one send(): maxAttempts * timeoutMs
 *   + (maxAttempts - 1) * max(backoffMaxMs, retryAfterMaxMs)
 * (with the defaults and the input bounds: 10 * 300 s + 9 * 30 s).
 */
export class Transport {
  private readonly baseUrl: URL
  private readonly apiKey: string
  private readonly timeoutMs: number
  private readonly maxAttempts: number
  private readonly userAgent: string
  private readonly redactor: Redactor
  private readonly log?: (message: string) => void
  private readonly sleep: (ms: number) => Promise<void>
  private readonly delayPolicy: RetryDelayPolicy
  private readonly maxResponseBytes: number
  /** The agent for direct connections, or the tunnel agent once loaded. */
  private agent?: Agent
  /** How to make the tunnel agent, when a proxy is in use; made once, on the first send. */
  private readonly makeTunnelAgent?: () => Promise<Agent>
  private tunnelAgent?: Promise<Agent>
  /** "host:port" of the proxy in use, for messages; undefined when connecting directly. */
  private readonly proxy?: string

  constructor(options: TransportOptions) {
    // Settings already insists on https; this is defence in depth, since the key rides along.
    if (options.baseUrl.protocol !== 'https:') {
      throw new InputError(
        Inputs.BaseUrl,
        `The service address must use https:, not ${options.baseUrl.protocol}: the API key is never sent unencrypted.`
      )
    }
    if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1) {
      throw new RangeError(`maxAttempts must be an integer >= 1, got ${options.maxAttempts}`)
    }
    const baseUrl = new URL(options.baseUrl.href)
    baseUrl.search = ''
    baseUrl.hash = ''
    if (!baseUrl.pathname.endsWith('/')) baseUrl.pathname += '/'
    this.baseUrl = baseUrl
    this.apiKey = options.apiKey
    this.timeoutMs = options.timeoutMs
    this.maxAttempts = options.maxAttempts
    this.userAgent = options.userAgent
    this.redactor = options.redactor
    this.redactor.add(options.apiKey)
    this.log = options.log
    this.sleep = options.sleep ?? defaultSleep
    this.delayPolicy = {
      backoffBaseMs: options.backoffBaseMs ?? BACKOFF_BASE_MS,
      backoffMaxMs: options.backoffMaxMs ?? BACKOFF_MAX_MS,
      retryAfterMaxMs: options.retryAfterMaxMs ?? RETRY_AFTER_MAX_MS,
      random: options.random ?? Math.random
    }
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES

    // Every request goes to baseUrl's origin, so one agent, chosen once, serves them all.
    const proxyUrl = getProxyUrl(baseUrl)
    if (proxyUrl?.hostname) {
      if (proxyUrl.password) this.redactor.add(proxyUrl.password)
      const proxyOptions = {
        host: proxyUrl.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: Number(proxyUrl.port) || (proxyUrl.protocol === 'https:' ? 443 : 80),
        ...(proxyUrl.username || proxyUrl.password
          ? { proxyAuth: `${proxyUrl.username}:${proxyUrl.password}` }
          : {})
      }
      this.proxy = `${proxyUrl.hostname}:${proxyOptions.port}`
      // The tunnel agent closes each socket once its request is done, so nothing lingers.
      // `tunnel` (and the assert module it loads) is imported only when a proxy is in use: most
      // runs connect directly, and every run pays for what it loads at start-up.
      this.makeTunnelAgent = async () => {
        const { default: tunnel } = await import('tunnel')
        return proxyUrl.protocol === 'https:'
          ? tunnel.httpsOverHttps({ proxy: proxyOptions })
          : tunnel.httpsOverHttp({ proxy: proxyOptions })
      }
    } else {
      // Idle keep-alive sockets are unref'd by Node, so they never hold the process open;
      // close() destroys them anyway.
      this.agent = new https.Agent({ keepAlive: true, maxSockets: 16 })
    }
  }

  /** The absolute URL of a request (base + path + query). Never leaves baseUrl's origin and prefix. */
  url(request: ServiceRequest): URL {
    const path = request.path.replace(/^\/+/, '')
    const url = new URL(path, this.baseUrl)
    url.search = request.query ? `?${request.query}` : ''
    if (url.origin !== this.baseUrl.origin || !url.pathname.startsWith(this.baseUrl.pathname)) {
      throw new Error(`The request path ${JSON.stringify(request.path)} leaves the service root.`)
    }
    return url
  }

  /** "POST /v2/change": the call's name in messages (the service path, without the base prefix or query). */
  static callName(request: ServiceRequest): string {
    return `${request.method} /${request.path.replace(/^\/+/, '')}`
  }

  /** Sends with retries; resolves only on a 2XX; otherwise throws ServiceError. */
  async send(request: ServiceRequest): Promise<ServiceResponse> {
    const url = this.url(request)
    const call = Transport.callName(request)
    const body =
      request.body === undefined
        ? undefined
        : typeof request.body === 'string'
          ? Buffer.from(request.body, 'utf8')
          : // A view, not a copy: event batches are up to 1 MB each.
            Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength)

    if (this.makeTunnelAgent) this.agent ??= await (this.tunnelAgent ??= this.makeTunnelAgent())
    for (let attempt = 1; ; attempt++) {
      let failure: Failure
      try {
        const response = await this.attempt(url, request, body)
        if (response.status >= 200 && response.status < 300) return response
        failure = {
          type: 'status',
          response,
          retryable: response.status === 429 || (response.status >= 500 && response.status < 600)
        }
      } catch (error) {
        failure = classifyError(error)
      }

      if (!failure.retryable || attempt >= this.maxAttempts) {
        throw this.failureError(request, call, failure, attempt)
      }
      const retryAfter =
        failure.type === 'status' ? failure.response.headers['retry-after'] : undefined
      const delay = retryDelayMs(attempt, retryAfter, Date.now(), this.delayPolicy)
      this.log?.(
        this.redactor.redact(
          `${call}: ${this.failureSummary(failure)}; retry ${attempt} of ${this.maxAttempts - 1} in ${seconds(delay)}`
        )
      )
      await this.sleep(delay)
    }
  }

  /** Destroys idle keep-alive sockets. The transport must not be used afterwards. */
  close(): void {
    // The tunnel agent has no destroy(): it closes each socket when its request is done.
    const agent = this.agent as Partial<Pick<Agent, 'destroy'>> | undefined
    agent?.destroy?.()
  }

  /** One attempt, bounded as a whole by timeoutMs. Resolves with any HTTP answer. */
  private attempt(
    url: URL,
    request: ServiceRequest,
    body: Buffer | undefined
  ): Promise<ServiceResponse> {
    return new Promise((resolve, reject) => {
      let settled = false
      let req: ClientRequest | undefined
      const chunks: Buffer[] = []
      let received = 0

      const settle = (outcome: () => void): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        outcome()
      }
      const fail = (error: unknown): void =>
        settle(() => {
          reject(error)
          // Listeners stay attached, so errors the destroy may still emit are swallowed.
          req?.destroy()
        })

      const timer = setTimeout(() => fail(new AttemptTimeout()), this.timeoutMs)

      const headers: Record<string, string | number> = {
        [API_KEY_HEADER]: this.apiKey,
        'User-Agent': this.userAgent,
        Accept: 'application/json'
      }
      if (body !== undefined) {
        headers['Content-Type'] = request.contentType ?? 'application/json'
        headers['Content-Length'] = body.byteLength
      } else if (request.method === 'POST') {
        // Some servers and load balancers answer 411 to a POST without a length.
        headers['Content-Length'] = 0
      }

      try {
        req = https.request({
          protocol: 'https:',
          hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: url.port || 443,
          path: `${url.pathname}${url.search}`,
          method: request.method,
          headers,
          agent: this.agent
        })
      } catch (error) {
        fail(error)
        return
      }

      req.on('error', fail)
      req.on('response', res => {
        res.on('error', fail)
        res.on('data', (chunk: Buffer) => {
          if (settled) return
          const room = this.maxResponseBytes - received
          if (chunk.byteLength < room) {
            chunks.push(chunk)
            received += chunk.byteLength
            return
          }
          // Enough: keep what fits, stop reading and drop the connection.
          chunks.push(chunk.subarray(0, room))
          received += room
          settle(() => {
            resolve(toResponse(res.statusCode ?? 0, res.headers, chunks))
            req?.destroy()
          })
        })
        res.on('end', () =>
          settle(() => resolve(toResponse(res.statusCode ?? 0, res.headers, chunks)))
        )
      })
      req.end(body)
    })
  }

  /** A short reason for a retry log line. */
  private failureSummary(failure: Failure): string {
    switch (failure.type) {
      case 'status':
        return `HTTP ${statusText(failure.response.status)}`
      case 'timeout':
        return `no complete answer within ${seconds(this.timeoutMs)}`
      case 'network':
        return `${failure.code} (${failure.message})`
    }
  }

  /** The final error: a complete sentence or two, redacted before the error exists. */
  private failureError(
    request: ServiceRequest,
    call: string,
    failure: Failure,
    attempts: number
  ): ServiceError {
    const after = attempts > 1 ? ` after ${attempts} attempts` : ''
    const host = this.baseUrl.host
    const via = this.proxy ? ` through the proxy ${this.proxy}` : ''
    const redact = (text: string): string => this.redactor.redact(text)
    const make = (message: string, details: Omit<ServiceErrorDetails, 'call' | 'attempts'>) =>
      new ServiceError(redact(message), { call, attempts, ...details })

    if (failure.type === 'timeout') {
      return make(
        `${call} got no complete answer within ${seconds(this.timeoutMs)} (${Inputs.TimeoutSeconds})${after}. ` +
          `The service is unavailable or too slow: try again later, or raise ${Inputs.TimeoutSeconds}.`,
        { kind: 'outage' }
      )
    }

    if (failure.type === 'network') {
      const { code, message } = failure
      if (CERTIFICATE_ERROR_CODES.has(code)) {
        return make(
          `${call} was not sent: the TLS certificate of ${host} is not trusted (${code}: ${sentenceBody(message)}). ` +
            `Check ${Inputs.BaseUrl}. If the service uses a private certificate authority, ` +
            `set NODE_EXTRA_CA_CERTS to that authority's PEM file in the step's env.`,
          { kind: 'protocol' }
        )
      }
      if (code === 'EPROTO' || code.startsWith('ERR_SSL_') || code.startsWith('HPE_')) {
        return make(
          `${call} failed: ${host}${via} did not answer as an HTTPS server (${code}: ${sentenceBody(message)}). ` +
            `Check that ${Inputs.BaseUrl} is the service's HTTPS address.`,
          { kind: 'protocol' }
        )
      }
      return make(
        `${call} could not reach ${host}${via}${after} (${code}: ${sentenceBody(message)}). ` +
          `The service is unreachable: check ${Inputs.BaseUrl}, and HTTPS_PROXY / NO_PROXY ` +
          `if the runner reaches the service through a proxy.`,
        { kind: 'outage' }
      )
    }

    const { status, headers, body } = failure.response
    const hint = request.hints?.[status]
    const withHint = (advice: string): string => (hint ? `${advice} ${sentence(hint)}` : advice)

    if (status >= 300 && status < 400) {
      const location = headers.location
      const target = location ? `a redirect to ${truncate(redact(location), 300)}` : 'a redirect'
      return make(
        `${call} was answered with HTTP ${statusText(status)}, ${target}. ` +
          `The action does not follow redirects, so that the API key never reaches another origin. ` +
          withHint(
            `If the new address is the service and you trust it, set ${Inputs.BaseUrl} to it.`
          ),
        { kind: 'protocol', status, serviceMessage: location ? redact(location) : undefined }
      )
    }

    const serviceMessage = extractServiceMessage(body, this.redactor)
    const said = `: ${sentenceBody(serviceMessage)}`
    if (status === 429 || (status >= 500 && status < 600)) {
      const advice =
        status === 429
          ? 'The service is rate limiting requests: try again later, or send less often.'
          : 'The service is unavailable: try again later.'
      return make(
        `${call} failed with HTTP ${statusText(status)}${after}${said}. ${withHint(advice)}`,
        {
          kind: 'outage',
          status,
          serviceMessage
        }
      )
    }
    if (status >= 400 && status < 500) {
      return make(
        `${call} was rejected with HTTP ${statusText(status)}${said}. ${withHint(rejectionAdvice(status))}`,
        { kind: 'rejected', status, serviceMessage }
      )
    }
    return make(
      `${call} got an unexpected HTTP ${statusText(status)}${said}. ` +
        withHint(`Check that ${Inputs.BaseUrl} points at the service.`),
      { kind: 'protocol', status, serviceMessage }
    )
  }
}

/** What to do about a 4XX. */
function rejectionAdvice(status: number): string {
  switch (status) {
    case 401:
    case 403:
      return `The service rejected the API key: check the ${Inputs.ApiKey} input and the key's permissions.`
    case 404:
      return `Check ${Inputs.BaseUrl} (it must be the service's root) and any id in the request.`
    case 400:
    case 422:
      return 'Check the values sent: the service says which one it refuses.'
    case 413:
      return 'The request is too large for the service: send less at once.'
    default:
      return 'The service refused the request.'
  }
}

/** A thrown value from an attempt, as a failure. */
function classifyError(error: unknown): Failure {
  if (error instanceof AttemptTimeout) return { type: 'timeout', retryable: true }
  const err = error as NodeJS.ErrnoException | undefined
  const message = err instanceof Error ? err.message : String(error)
  let code = typeof err?.code === 'string' ? err.code : undefined
  if (!code && /socket hang up/i.test(message)) code = 'ECONNRESET'
  code ??= 'ERROR'
  return { type: 'network', code, message, retryable: RETRYABLE_NETWORK_CODES.has(code) }
}

function toResponse(
  status: number,
  headers: IncomingHttpHeaders,
  chunks: Buffer[]
): ServiceResponse {
  return { status, headers, body: Buffer.concat(chunks).toString('utf8') }
}

/** "503 Service Unavailable". */
function statusText(status: number): string {
  const reason = STATUS_CODES[status]
  return reason ? `${status} ${reason}` : `${status}`
}

/** "1.3 s", "30 s". */
function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`
}

/** Ends a text with a full stop unless it already ends a sentence. */
function sentence(text: string): string {
  const trimmed = text.trim()
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}

/** A text placed mid-sentence: without its own final full stop. */
function sentenceBody(text: string): string {
  return text.trim().replace(/\.+$/, '')
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

const MESSAGE_FIELDS = ['message', 'error_description', 'error', 'detail', 'errors'] as const
const EXCERPT_MAX_CHARS = 200

/**
 * What the service said: the message field of a JSON error body, or else an excerpt of the body.
 * Redacted before it is shortened, so a cut can never leave part of a secret behind.
 */
export function extractServiceMessage(body: string, redactor: Redactor): string {
  const found = messageFromJson(body)
  if (found !== undefined) {
    const text = truncate(oneLine(redactor.redact(found)), EXCERPT_MAX_CHARS)
    if (text) return text
  }
  return bodyExcerpt(redactor.redact(body))
}

function messageFromJson(body: string): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return undefined
  }
  if (typeof parsed === 'string') return parsed
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const record = parsed as Record<string, unknown>
  for (const field of MESSAGE_FIELDS) {
    const value = record[field]
    if (typeof value === 'string' && value.trim()) return value
    // { "error": { "message": "..." } } is common enough to look one level down.
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const nested = (value as Record<string, unknown>)['message']
      if (typeof nested === 'string' && nested.trim()) return nested
    }
    if (value !== undefined && value !== null && typeof value !== 'string')
      return JSON.stringify(value)
  }
  return undefined
}

/** One line, whitespace collapsed, HTML tags stripped if it looks like HTML, at most 200 chars. */
export function bodyExcerpt(body: string): string {
  let text = body
  if (/^\s*<(!doctype|html|head|body|\?xml|[a-z][a-z0-9]*[\s>])/i.test(text)) {
    text = text
      .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
  }
  text = oneLine(text)
  return text ? truncate(text, EXCERPT_MAX_CHARS) : '(empty body)'
}

/** For the client: an error for a 2XX whose body is not the documented shape. */
export function unexpectedResponse(
  request: ServiceRequest,
  response: ServiceResponse,
  expected: string,
  redactor: Redactor
): ServiceError {
  const call = Transport.callName(request)
  const excerpt = bodyExcerpt(redactor.redact(response.body))
  const message = redactor.redact(
    `${call} answered HTTP ${statusText(response.status)}, but not with the documented answer ` +
      `(expected ${expected}); it sent: ${excerpt}. Check that ${Inputs.BaseUrl} points at the service's root.`
  )
  return new ServiceError(message, {
    call,
    kind: 'protocol',
    status: response.status,
    serviceMessage: excerpt
  })
}

/**
 * The HTTPS transport under the service client: it gets a request to the service and an answer
 * back. TLS, the proxy, a deadline for each attempt as a whole, the response size cap, retries
 * within the run's outage budget, and the sockets, which end with their attempt. What is retried
 * and how long to wait is retry.ts; the words of a failure are failures.ts.
 *
 * It uses node:https directly rather than @actions/http-client: that package's entry point loads
 * undici (~450 KB of bundle and noticeable cold start), and we need control over redirects (never
 * followed) and a deadline that covers a whole attempt.
 */
import * as https from 'node:https'
import type { ClientRequestArgs, IncomingHttpHeaders } from 'node:http'
import type { Duplex } from 'node:stream'
import type { ServiceError } from '../errors.ts'
import type { Redactor } from '../redact.ts'
import {
  failureError,
  failureSummary,
  GENERIC_ADVICE,
  unexpectedResponse,
  type FailureAdvice,
  type FailureScene
} from './failures.ts'
import { proxyFor, type ProxyRoute } from './proxy.ts'
import {
  API_KEY_HEADER,
  callName,
  requestUrl,
  serviceRoot,
  type ServiceRequest,
  type ServiceResponse
} from './request.ts'
import {
  AttemptTimeout,
  classifyError,
  isRetryable,
  ResponseTooLarge,
  type Failure,
  BACKOFF_BASE_MS,
  BACKOFF_MAX_MS,
  MIN_RETRY_ATTEMPT_MS,
  OUTAGE_BUDGET_MS,
  OutageBudget,
  RETRY_AFTER_MAX_MS,
  retryDelayMs,
  type RetryDelayPolicy
} from './retry.ts'
import { formatSeconds } from '../text.ts'

// What callers of the transport need from request.ts, so that one import serves them.
export { API_KEY_HEADER, callName, requestUrl } from './request.ts'
export type { ServiceRequest, ServiceResponse } from './request.ts'

/** A response body larger than this is an error: the service never needs to send more. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024

export interface TransportOptions {
  /** The service root: https, possibly with a path prefix ('https://host/api/'). */
  baseUrl: URL
  apiKey: string
  /** Bounds each attempt as a whole: connect, proxy tunnel, TLS, upload and the full response. */
  timeoutMs: number
  /** Total attempts per request, at least 1. */
  maxAttempts: number
  userAgent: string
  /** The transport adds apiKey (and a proxy password) to it. */
  redactor: Redactor
  /** What a failure message tells the user to do, in the caller's words. */
  advice?: FailureAdvice
  /** One line per retry, e.g. "POST /v2/change: HTTP 503 Service Unavailable; retry 2 of 3 in 1.3 s". */
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
  /** Defaults to OUTAGE_BUDGET_MS; smaller in tests. */
  outageBudgetMs?: number
  /** Defaults to MIN_RETRY_ATTEMPT_MS; smaller in tests. */
  minRetryAttemptMs?: number
}

const defaultSleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/**
 * Sends requests to the service with retries.
 *
 * What an outage costs: all requests of one transport share one outage budget (OUTAGE_BUDGET_MS).
 * Failed attempts that may be retried, and the waits between them, are charged to it; an
 * attempt's deadline is cut to what remains, and a retry is made only while at least
 * minRetryAttemptMs would remain for it. Once it is spent, a later request is refused at once,
 * unsent, as an outage. Healthy answers are never charged, however many or slow.
 */
export class Transport {
  private readonly baseUrl: URL
  private readonly apiKey: string
  private readonly timeoutMs: number
  private readonly maxAttempts: number
  private readonly userAgent: string
  private readonly redactor: Redactor
  private readonly advice: FailureAdvice
  private readonly log?: (message: string) => void
  private readonly sleep: (ms: number) => Promise<void>
  private readonly delayPolicy: RetryDelayPolicy
  private readonly maxResponseBytes: number
  private readonly budget: OutageBudget
  private readonly minRetryAttemptMs: number
  /** The proxy in use; undefined when connecting directly. Chosen once: one origin, one route. */
  private readonly proxy?: ProxyRoute
  /** One agent for every request: one origin, one route, and kept-alive sockets for streaming. */
  private readonly agent: TrackingAgent
  /** The sockets of each attempt under way, so that close() can end them. */
  private readonly attempts = new Set<Set<Duplex>>()
  private closed = false

  constructor(options: TransportOptions) {
    // Settings insist on https (and say so, naming the input); the key must never go in clear.
    if (options.baseUrl.protocol !== 'https:')
      throw new Error('The transport sends only over https.')
    if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1) {
      throw new RangeError(`maxAttempts must be an integer >= 1, got ${options.maxAttempts}`)
    }
    this.baseUrl = serviceRoot(options.baseUrl)
    this.apiKey = options.apiKey
    this.timeoutMs = options.timeoutMs
    this.maxAttempts = options.maxAttempts
    this.userAgent = options.userAgent
    this.redactor = options.redactor
    this.redactor.add(options.apiKey)
    this.advice = options.advice ?? GENERIC_ADVICE
    this.log = options.log
    this.sleep = options.sleep ?? defaultSleep
    this.delayPolicy = {
      backoffBaseMs: options.backoffBaseMs ?? BACKOFF_BASE_MS,
      backoffMaxMs: options.backoffMaxMs ?? BACKOFF_MAX_MS,
      retryAfterMaxMs: options.retryAfterMaxMs ?? RETRY_AFTER_MAX_MS,
      random: options.random ?? Math.random
    }
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES
    this.budget = new OutageBudget(options.outageBudgetMs ?? OUTAGE_BUDGET_MS)
    this.minRetryAttemptMs = options.minRetryAttemptMs ?? MIN_RETRY_ATTEMPT_MS
    this.proxy = proxyFor(this.baseUrl)
    if (this.proxy?.password) this.redactor.add(this.proxy.password)
    this.agent = new TrackingAgent(this.proxy)
  }

  /** Sends with retries; resolves only on a 2XX; otherwise throws ServiceError. */
  async send(request: ServiceRequest): Promise<ServiceResponse> {
    const url = requestUrl(this.baseUrl, request)
    const scene = this.scene(request)
    // No secret is ever sent, not even one pasted into a commit message the change quotes.
    const body =
      request.body === undefined
        ? undefined
        : this.redactor.redactBytes(
            typeof request.body === 'string'
              ? Buffer.from(request.body, 'utf8')
              : // A view, not a copy: event batches are up to 1 MB each.
                Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength)
          )

    // What a retry would need is what a later request needs too: less is as good as spent.
    if (this.budget.remainingMs < this.minRetryAttemptMs) {
      throw failureError(scene, { type: 'budget-spent' }, 0, false)
    }
    for (let attempt = 1; ; attempt++) {
      if (this.closed)
        throw new Error(`${callName(request)} was not sent: the transport is closed.`)
      const deadlineMs = Math.min(this.timeoutMs, this.budget.remainingMs)
      const started = performance.now()
      let failure: Failure
      try {
        const response = await this.attempt(url, request, body, deadlineMs)
        if (response.status >= 200 && response.status < 300) return response
        failure = { type: 'status', response }
      } catch (error) {
        failure = classifyError(error, deadlineMs, deadlineMs < this.timeoutMs)
      }

      if (!isRetryable(failure)) throw failureError(scene, failure, attempt, false)
      this.budget.charge(performance.now() - started)
      if (attempt >= this.maxAttempts) throw failureError(scene, failure, attempt, false)
      const retryAfter =
        failure.type === 'status' ? failure.response.headers['retry-after'] : undefined
      const delay = retryDelayMs(attempt, retryAfter, Date.now(), this.delayPolicy)
      if (this.budget.remainingMs - delay < this.minRetryAttemptMs) {
        throw failureError(scene, failure, attempt, true)
      }
      this.budget.charge(delay)
      this.log?.(
        this.redactor.redact(
          `${callName(request)}: ${failureSummary(failure)}; retry ${attempt} of ${this.maxAttempts - 1} in ${formatSeconds(delay)}`
        )
      )
      await this.sleep(delay)
    }
  }

  /** For the client: the error for a 2XX whose body is not the documented answer. */
  unexpectedAnswer(
    request: ServiceRequest,
    response: ServiceResponse,
    expected: string
  ): ServiceError {
    return unexpectedResponse(this.scene(request), response, expected)
  }

  /** Ends every attempt under way and its sockets (on cancellation). Sends nothing afterwards. */
  close(): void {
    for (const sockets of this.attempts) destroyAll(sockets)
    this.attempts.clear()
    this.agent.destroy()
    this.closed = true
  }

  private scene(request: ServiceRequest): FailureScene {
    return {
      request,
      baseUrl: this.baseUrl,
      proxy: this.proxy?.name,
      advice: this.advice,
      redactor: this.redactor,
      budgetMs: this.budget.totalMs
    }
  }

  /**
   * One attempt, bounded as a whole by deadlineMs. Resolves with any complete HTTP answer within
   * the size cap. A failed attempt destroys every socket it opened or used as it ends, a pending
   * proxy tunnel included; after a complete answer, its socket waits in the agent for the next
   * request (idle sockets are unref'd by Node, so they never hold the process open).
   */
  private attempt(
    url: URL,
    request: ServiceRequest,
    body: Buffer | undefined,
    deadlineMs: number
  ): Promise<ServiceResponse> {
    const sockets = new Set<Duplex>()
    this.attempts.add(sockets)
    return new Promise((resolve, reject) => {
      let settled = false
      const chunks: Buffer[] = []
      let received = 0

      const settle = (outcome: () => void): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this.attempts.delete(sockets)
        outcome()
      }
      const fail = (error: unknown): void =>
        settle(() => {
          // Listeners stay attached, so errors the destruction may still emit are swallowed.
          destroyAll(sockets)
          reject(error)
        })
      const timer = setTimeout(() => fail(new AttemptTimeout()), deadlineMs)

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
        const req = https.request({
          protocol: 'https:',
          hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: url.port || 443,
          path: `${url.pathname}${url.search}`,
          method: request.method,
          headers,
          agent: this.agent,
          [ATTEMPT_SOCKETS]: sockets
        } as https.RequestOptions)
        // A kept-alive socket from an earlier request is this attempt's too.
        req.on('socket', socket => sockets.add(socket))
        req.on('error', fail)
        req.on('response', res => {
          res.on('error', fail)
          res.on('data', (chunk: Buffer) => {
            if (settled) return
            received += chunk.byteLength
            if (received > this.maxResponseBytes) fail(new ResponseTooLarge(this.maxResponseBytes))
            else chunks.push(chunk)
          })
          res.on('end', () =>
            settle(() =>
              resolve({
                status: res.statusCode ?? 0,
                headers: res.headers as IncomingHttpHeaders,
                body: Buffer.concat(chunks).toString('utf8')
              })
            )
          )
        })
        req.end(body)
      } catch (error) {
        fail(error)
      }
    })
  }
}

/** The request option through which the agent tells an attempt of each socket it opens. */
const ATTEMPT_SOCKETS = Symbol('attempt sockets')

/**
 * The transport's agent: Node's own proxy tunnel when a proxy is in use (proxyEnv holds only the
 * proxy chosen by proxy.ts, so Node applies no rules of its own), keep-alive, and each socket it
 * opens told to the attempt that asked for it. Node hands a request its socket only once a tunnel
 * is up, so destroying the request alone would leave a CONNECT the proxy never answers open.
 */
class TrackingAgent extends https.Agent {
  constructor(proxy: ProxyRoute | undefined) {
    super({ keepAlive: true, proxyEnv: proxy ? { HTTPS_PROXY: proxy.href } : {} })
  }

  override createConnection(
    options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void
  ): Duplex | null | undefined {
    const socket = super.createConnection(options, callback)
    const attempt = (options as { [ATTEMPT_SOCKETS]?: Set<Duplex> })[ATTEMPT_SOCKETS]
    if (socket) attempt?.add(socket)
    return socket
  }
}

function destroyAll(sockets: Set<Duplex>): void {
  for (const socket of sockets) socket.destroy()
  sockets.clear()
}

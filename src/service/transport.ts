/**
 * The HTTPS transport under the service client: TLS, the proxy, deadlines, the answer size cap,
 * retries within the run's outage budget, and the sockets. It is node:https itself, so that
 * redirects are never followed, one deadline covers a whole attempt (proxy tunnel, upload and the
 * full body), and every socket of a failed attempt ends with it.
 */
import { getProxyUrl } from '@actions/http-client/lib/proxy'
import * as http from 'node:http'
import * as https from 'node:https'
import * as tls from 'node:tls'
import type { Duplex } from 'node:stream'
import type { ServiceError } from '../errors.ts'
import type { Redactor } from '../redact.ts'
import { formatSeconds } from '../helpers/text.ts'
import {
  failureError,
  failureSummary,
  isRetryable,
  networkFailure,
  type Failure,
  type FailureAdvice,
  type FailureScene
} from './failures.ts'
import {
  API_KEY_HEADER,
  callName,
  hostPort,
  requestUrl,
  type ServiceRequest,
  type ServiceResponse
} from './request.ts'
import { stoppableLookup } from './resolver.ts'
import { RETRY_POLICY, retryDelayMs, type RetryPolicy } from './retry.ts'

/** A larger answer is an error: the service never needs to send more. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024

export interface TransportOptions {
  /** The service root, as the base-url setting gives it: https, ending in '/'. */
  baseUrl: URL
  apiKey: string
  /** Bounds each attempt as a whole: connect, proxy tunnel, TLS, upload and the full answer. */
  timeoutMs: number
  /** Total attempts per request, at least 1. */
  maxAttempts: number
  userAgent: string
  /** The transport adds apiKey (and a proxy password) to it. */
  redactor: Redactor
  advice: FailureAdvice
  /** One line per retry: "POST /v2/change: HTTP 503 Service Unavailable; retry 2 of 3 in 1.3 s". */
  log?: (message: string) => void
  retry?: Partial<RetryPolicy>
  /** MAX_RESPONSE_BYTES unless told: tests use less. */
  maxResponseBytes?: number
}

/**
 * Sends requests with retries. All requests share one outage budget: retryable failed attempts
 * and the waits between them are charged to it, and deadlines cut to what remains; once it is
 * spent, a later request is refused unsent. Healthy answers are never charged.
 */
export class Transport {
  private readonly options: TransportOptions
  private readonly policy: RetryPolicy
  private outageMs = 0
  private readonly where: Omit<FailureScene, 'request'>
  /** One agent for every request: one route, and kept-alive sockets for streaming. */
  private readonly agent: TrackingAgent
  /** The sockets of each attempt under way, so that close() can end them. */
  private readonly attempts = new Set<Set<Duplex>>()
  /** Names looked up so that close() can stop them: a resolver may never answer. */
  private readonly names = stoppableLookup()
  private closed = false

  constructor(options: TransportOptions) {
    const { baseUrl, advice, redactor } = options
    this.options = options
    this.policy = { ...RETRY_POLICY, ...options.retry }
    redactor.add(options.apiKey)
    // The proxy, chosen once (one origin, one route) by @actions/http-client's rules (HTTPS_PROXY,
    // then NO_PROXY; loopback always direct), read through its lib/proxy entry, which loads
    // nothing else. Its credentials go only to the agent.
    const found = getProxyUrl(baseUrl)
    const proxy = found?.hostname ? found : undefined
    // Decoded by the toolkit: the password as a server would echo it.
    if (proxy?.password) redactor.add(proxy.password)
    this.agent = new TrackingAgent(proxy)
    const budgetMs = this.policy.outageBudgetMs
    this.where = { baseUrl, proxy: proxy && hostPort(proxy), advice, redactor, budgetMs }
  }

  /** Sends with retries; resolves only on a 2XX; otherwise throws ServiceError. */
  async send(request: ServiceRequest): Promise<ServiceResponse> {
    const { redactor, maxAttempts, timeoutMs } = this.options
    const { minRetryAttemptMs } = this.policy
    const url = requestUrl(this.options.baseUrl, request)
    const scene = { ...this.where, request }
    const { body } = request
    // A byte body is viewed, not copied: event batches are up to 1 MB each.
    const raw =
      typeof body === 'string'
        ? Buffer.from(body)
        : body && Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    // No secret is ever sent, not even one pasted into a commit message the change quotes.
    const bytes = raw && redactor.redactBytes(raw)

    // What a retry would need is what a later request needs too: less is as good as spent.
    if (this.budgetLeftMs() < minRetryAttemptMs) {
      throw failureError(scene, { type: 'budget-spent' }, 0, false)
    }
    for (let attempt = 1; ; attempt++) {
      if (this.closed) {
        throw new Error(`${callName(request)} was not sent: the transport is closed.`)
      }
      const started = performance.now()
      const deadlineMs = Math.min(timeoutMs, this.budgetLeftMs())
      const failure = await this.attempt(url, request, bytes, deadlineMs)
      if (failure.type === 'status' && Math.floor(failure.response.status / 100) === 2) {
        return failure.response
      }
      if (!isRetryable(failure)) throw failureError(scene, failure, attempt, false)
      this.outageMs += performance.now() - started
      if (attempt >= maxAttempts) throw failureError(scene, failure, attempt, false)
      const retryAfter =
        failure.type === 'status' ? failure.response.headers['retry-after'] : undefined
      const delay = retryDelayMs(attempt, retryAfter, Date.now(), this.policy)
      if (this.budgetLeftMs() - delay < minRetryAttemptMs) {
        throw failureError(scene, failure, attempt, true)
      }
      this.outageMs += delay
      this.options.log?.(
        redactor.redact(
          `${callName(request)}: ${failureSummary(failure)}; retry ${attempt} of ${maxAttempts - 1} in ${formatSeconds(delay)}`
        )
      )
      await this.policy.sleep(delay)
    }
  }

  /** The error for a request's failure found by the caller (an answer of the wrong shape). */
  failureError(request: ServiceRequest, failure: Failure): ServiceError {
    return failureError({ ...this.where, request }, failure, 1, false)
  }

  /** Ends every attempt under way, its sockets and the idle ones. Sends nothing afterwards. */
  close(): void {
    for (const sockets of this.attempts) destroyAll(sockets)
    this.attempts.clear()
    this.agent.destroy()
    this.names.stop()
    this.closed = true
  }

  private budgetLeftMs(): number {
    return Math.max(0, this.policy.outageBudgetMs - this.outageMs)
  }

  /**
   * One attempt within deadlineMs: a complete HTTP answer within the size cap, or why there was
   * none. A failed attempt destroys every socket it opened or used, a pending proxy tunnel
   * included; after an answer, its socket waits in the agent (unref'd) for the next request.
   */
  private attempt(
    url: URL,
    request: ServiceRequest,
    body: Buffer | undefined,
    deadlineMs: number
  ): Promise<Failure> {
    const { apiKey, userAgent, timeoutMs, maxResponseBytes = MAX_RESPONSE_BYTES } = this.options
    const sockets = new Set<Duplex>()
    this.attempts.add(sockets)
    return new Promise(resolve => {
      let settled = false
      const chunks: Buffer[] = []
      let received = 0
      const settle = (outcome: Failure): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this.attempts.delete(sockets)
        // Listeners stay attached, so errors the destruction may still emit are swallowed.
        if (outcome.type !== 'status') destroyAll(sockets)
        resolve(outcome)
      }
      const budgetCut = deadlineMs < timeoutMs
      const timer = setTimeout(() => settle({ type: 'timeout', deadlineMs, budgetCut }), deadlineMs)
      const fail = (error: unknown): void => settle(networkFailure(error))

      const headers: Record<string, string | number> = {
        [API_KEY_HEADER]: apiKey,
        'User-Agent': userAgent,
        Accept: 'application/json'
      }
      if (request.contentType) headers['Content-Type'] = request.contentType
      // Some servers and load balancers answer 411 to a POST without a length.
      if (request.method === 'POST') headers['Content-Length'] = body?.byteLength ?? 0
      const { lookup } = this.names
      const options = { method: request.method, headers, agent: this.agent, lookup }
      const req = https.request(url, Object.assign(options, { [ATTEMPT_SOCKETS]: sockets }))
      // A kept-alive socket from an earlier request is this attempt's too.
      req.on('socket', socket => sockets.add(socket))
      req.on('error', fail)
      req.on('response', res => {
        res.on('error', fail)
        res.on('data', (chunk: Buffer) => {
          received += chunk.byteLength
          if (received > maxResponseBytes) settle({ type: 'too-large', capBytes: maxResponseBytes })
          else chunks.push(chunk)
        })
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8')
          settle({
            type: 'status',
            response: { status: res.statusCode ?? 0, headers: res.headers, body }
          })
        })
      })
      req.end(body)
    })
  }
}

/** The request option through which the agent tells an attempt of each socket it opens. */
const ATTEMPT_SOCKETS = Symbol('attempt sockets')

/**
 * Keep-alive, the proxy's CONNECT tunnel, and each socket it opens told to its attempt: a request
 * gets its socket only once a tunnel is up, so destroying the request would leave a pending
 * CONNECT open. The tunnel is made here, not by Node's own proxy support, which Node 20 lacks.
 */
class TrackingAgent extends https.Agent {
  private readonly proxy: URL | undefined

  constructor(proxy: URL | undefined) {
    super({ keepAlive: true })
    this.proxy = proxy
  }

  override createConnection(
    options: http.ClientRequestArgs,
    callback: (err: Error | null, stream?: Duplex) => void
  ): Duplex | null | undefined {
    const attempt = (options as { [ATTEMPT_SOCKETS]?: Set<Duplex> })[ATTEMPT_SOCKETS]
    const track = <T extends Duplex>(socket: T): T => (attempt?.add(socket), socket)
    if (this.proxy === undefined) return track(super.createConnection(options, callback) as Duplex)
    const { proxy } = this
    const target = `${options.host}:${options.port}`
    const headers: Record<string, string> = { Host: target }
    if (proxy.username || proxy.password) {
      const credentials = Buffer.from(`${proxy.username}:${proxy.password}`).toString('base64')
      headers['Proxy-Authorization'] = `Basic ${credentials}`
    }
    const client = proxy.protocol === 'https:' ? https : http
    const connect = client.request({
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: proxy.port || (proxy.protocol === 'https:' ? 443 : 80),
      method: 'CONNECT',
      path: target,
      headers,
      agent: false,
      // The request's own lookup, which reaches here with its other options.
      lookup: options.lookup
    })
    connect.on('socket', track)
    connect.once('error', error => callback(error))
    connect.once('connect', (answer, socket) => {
      if (answer.statusCode !== 200) {
        socket.destroy()
        const refused = new Error(`Proxy response (${answer.statusCode}) to CONNECT ${target}`)
        return callback(
          Object.assign(refused, { code: 'ERR_PROXY_TUNNEL', statusCode: answer.statusCode })
        )
      }
      callback(null, track(tls.connect({ ...(options as tls.ConnectionOptions), socket })))
    })
    connect.end()
    return undefined
  }
}

function destroyAll(sockets: Set<Duplex>): void {
  for (const socket of sockets) socket.destroy()
  sockets.clear()
}

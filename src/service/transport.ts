/**
 * The HTTPS transport under the service client: the API key, deadlines, the answer size cap and
 * retries within the run's outage budget, over the program's one bounded request (a route to the
 * service, its proxy chosen once), which follows no redirect and ends every socket of a failed
 * attempt with it.
 */
import type { ServiceError } from '../errors.ts'
import type { Redactor } from '../redact.ts'
import { formatSeconds } from '../helpers/text.ts'
import { Route } from './bounded-request.ts'
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
  /** One route for every request: one proxy, and kept-alive sockets for streaming. */
  private readonly route: Route
  /** Aborted by close(): a retry's wait ends with it. */
  private readonly closing = new AbortController()

  constructor(options: TransportOptions) {
    const { baseUrl, advice, redactor } = options
    this.options = options
    this.policy = { ...RETRY_POLICY, ...options.retry }
    redactor.add(options.apiKey)
    this.route = new Route(baseUrl, { keepAlive: true })
    const { proxy } = this.route
    // Decoded by the toolkit: the password as a server would echo it.
    if (proxy?.password) redactor.add(proxy.password)
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
      if (this.closing.signal.aborted) {
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
      await this.policy.sleep(delay, this.closing.signal)
    }
  }

  /** The error for a request's failure found by the caller (an answer of the wrong shape). */
  failureError(request: ServiceRequest, failure: Failure): ServiceError {
    return failureError({ ...this.where, request }, failure, 1, false)
  }

  /** Ends every attempt under way, its sockets and the idle ones. Sends nothing afterwards. */
  close(): void {
    this.route.close()
    this.closing.abort()
  }

  private budgetLeftMs(): number {
    return Math.max(0, this.policy.outageBudgetMs - this.outageMs)
  }

  /**
   * One attempt within deadlineMs: a complete HTTP answer within the size cap, or why there was
   * none. Throws when close() stops it: the request ends there, unretried.
   */
  private async attempt(
    url: URL,
    request: ServiceRequest,
    body: Buffer | undefined,
    deadlineMs: number
  ): Promise<Failure> {
    const { apiKey, userAgent, timeoutMs, maxResponseBytes = MAX_RESPONSE_BYTES } = this.options
    const headers: Record<string, string | number> = {
      [API_KEY_HEADER]: apiKey,
      'User-Agent': userAgent,
      Accept: 'application/json'
    }
    if (request.contentType) headers['Content-Type'] = request.contentType
    // Some servers and load balancers answer 411 to a POST without a length.
    if (request.method === 'POST') headers['Content-Length'] = body?.byteLength ?? 0
    const outcome = await this.route.request(url, {
      method: request.method,
      headers,
      body,
      deadlineMs,
      maxAnswerBytes: maxResponseBytes
    })
    if (outcome.type === 'stopped') {
      throw new Error(`${callName(request)} was stopped: the transport is closed.`)
    }
    if (outcome.type === 'error') return networkFailure(outcome.error)
    if (outcome.type === 'timeout') return { ...outcome, budgetCut: deadlineMs < timeoutMs }
    return outcome
  }
}

/**
 * A failed Octokit request as an ApiFailure: GitHub's answer (status, its message without the
 * token, an exhausted rate limit), the proxy's refusal of the tunnel, the time budget, or the
 * network's error code. The client's own failures (bounded-fetch.ts) pass through as they are.
 */
import { collapseWhitespace, truncateText } from '../text.ts'
import { ApiError, type ApiFailure } from './api-failure.ts'

/** GitHub's messages are short; anything longer is cut (after the token is removed). */
const MAX_MESSAGE_EXCERPT_CHARS = 120
const FIRST_ERROR_STATUS = 400

export interface RequestContext {
  /** The call's name, "GET /repos/o/r/releases". */
  call: string
  /** "host:port" of the proxy in use. */
  proxy?: string
  /** Set when the lookup's time budget has run out: the request was aborted for it. */
  budgetMs?: number
  /** Removes the token from outside text. */
  redact: (text: string) => string
}

export function failureOfRequest(error: unknown, context: RequestContext): ApiFailure {
  const { call, proxy } = context
  const causes = causeChain(error)
  const own = causes.find((cause): cause is ApiError => cause instanceof ApiError)
  if (own) return own.failure
  if (context.budgetMs !== undefined) return { type: 'budget', call, budgetMs: context.budgetMs }
  const answered = answerOf(error)
  if (answered) {
    return {
      type: 'status',
      call,
      status: answered.status,
      ...messageOf(answered.data, context.redact),
      ...rateLimit(answered.status, answered.headers)
    }
  }
  // undici's words when a proxy answers CONNECT with anything but 200.
  const tunnelStatus = causes
    .map(cause => /Proxy response \((\d{3})\)/.exec(messageText(cause))?.[1])
    .find(Boolean)
  if (proxy && tunnelStatus) return { type: 'proxy', call, proxy, status: Number(tunnelStatus) }
  return { type: 'network', call, code: errorCode(error), ...(proxy ? { proxy } : {}) }
}

/** The system's code ("ECONNRESET") when a cause has one, else the innermost code or name. */
export function errorCode(error: unknown): string {
  const causes = causeChain(error)
  const codes = causes
    .map(cause => (cause as { code?: unknown }).code)
    .filter((code): code is string => typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code))
  const systemCode = codes.find(code => /^E[A-Z]+$/.test(code))
  const name = causes
    .map(cause => (cause as { name?: unknown }).name)
    .filter((value): value is string => typeof value === 'string')
    .at(-1)
  return systemCode ?? codes.at(-1) ?? name ?? 'an error'
}

/** GitHub's `message`, without the token, collapsed and then cut. */
function messageOf(data: unknown, redact: (text: string) => string): { message?: string } {
  const message = (data as { message?: unknown } | null | undefined)?.message
  if (typeof message !== 'string') return {}
  // Removed before cutting (in every encoded form too): a cut must never leave part of it.
  const collapsed = collapseWhitespace(redact(message))
  return collapsed ? { message: truncateText(collapsed, MAX_MESSAGE_EXCERPT_CHARS) } : {}
}

/** An error and its causes, outermost first (bounded: a cycle ends it). */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = []
  for (let at = error; at !== undefined && at !== null && !chain.includes(at);) {
    chain.push(at)
    at = (at as { cause?: unknown }).cause
  }
  return chain
}

function messageText(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message
  return typeof message === 'string' ? message : ''
}

/** The answer of an error status, as Octokit's RequestError carries it. */
function answerOf(
  error: unknown
): { status: number; data: unknown; headers: Record<string, unknown> } | undefined {
  const response = (error as { response?: unknown } | null)?.response as
    { status?: unknown; data?: unknown; headers?: unknown } | undefined
  if (typeof response?.status !== 'number' || response.status < FIRST_ERROR_STATUS) return undefined
  const headers =
    typeof response.headers === 'object' && response.headers !== null
      ? (response.headers as Record<string, unknown>)
      : {}
  return { status: response.status, data: response.data, headers }
}

function headerText(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.join(', ')
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined
}

/** GitHub signals an exhausted rate limit by x-ratelimit-remaining: 0 (primary) or Retry-After (secondary). */
function rateLimit(
  status: number,
  headers: Record<string, unknown>
): { rateLimited: boolean; resetAt?: string } {
  if (status !== 403 && status !== 429) return { rateLimited: false }
  const remaining = headerText(headers['x-ratelimit-remaining'])
  const retryAfter = headerText(headers['retry-after'])
  const rateLimited = status === 429 || remaining === '0' || retryAfter !== undefined
  const reset = new Date(Number(headerText(headers['x-ratelimit-reset'])) * 1000)
  // A reset beyond what a Date holds (or not a number) is not said rather than thrown on.
  const resetAt = rateLimited && reset.getTime() > 0 ? reset.toISOString() : undefined
  return { rateLimited, ...(resetAt ? { resetAt } : {}) }
}

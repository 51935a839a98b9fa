/**
 * The service's failures: whether another attempt may help, who must act (the kind), and the
 * words a person reads, with what the service said. This layer never names an input: the caller
 * passes its advice in (FailureAdvice).
 */
import { STATUS_CODES } from 'node:http'
import { errorMessage, ServiceError } from '../errors.ts'
import { isJsonObject, parseJsonSafely } from '../helpers/json.ts'
import type { Redactor } from '../redact.ts'
import {
  collapseWhitespace,
  formatSeconds,
  truncateText,
  withoutFinalStop
} from '../helpers/text.ts'
import { callName, hostPort, type ServiceRequest, type ServiceResponse } from './request.ts'

/** How one attempt ended (any HTTP answer is a 'status'), or why a request was not sent. */
export type Failure =
  | { type: 'status'; response: ServiceResponse }
  /** No complete answer within the deadline; `budgetCut` when the outage budget shortened it. */
  | { type: 'timeout'; deadlineMs: number; budgetCut: boolean }
  | { type: 'network'; code: string; message: string }
  /** The proxy did not open a tunnel; `status` is its answer to CONNECT, when it gave one. */
  | { type: 'proxy'; status?: number }
  | { type: 'too-large'; capBytes: number }
  /** A 2XX whose body is not the documented answer. */
  | { type: 'unexpected'; response: ServiceResponse; expected: string }
  /** Not sent: the run's outage budget was spent by earlier requests. */
  | { type: 'budget-spent' }

/** What the user can do, in the caller's words: lower-case clauses ('check the base-url input'). */
export interface FailureAdvice {
  /** How to wait less for a hanging service, or longer for a slow one. */
  changeWait: string
  checkAddress: string
  checkApiKey: string
}

/** Where a request went, for the words of its failure. */
export interface FailureScene {
  request: ServiceRequest
  baseUrl: URL
  /** "host:port" of the proxy in use; undefined when connecting directly. */
  proxy?: string
  advice: FailureAdvice
  redactor: Redactor
  /** The run's outage budget. */
  budgetMs: number
}

/**
 * Network errors that mean "try again": the service or the path to it had a moment. ENOTFOUND is
 * not one: a name that does not exist is a typo. HPE_* (a malformed or oversized header) is
 * retried like a 5XX: proxies in trouble send such answers.
 */
const RETRYABLE_NETWORK_CODE =
  /^(ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|ETIMEDOUT|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ENETDOWN|HPE_.*)$/

/** Certificate verification failures: retrying cannot help, and the fix is configuration. */
const CERTIFICATE_ERROR = /^(?!ERR_SSL_).*CERT|^UNABLE_TO_|^INVALID_CA$|^HOSTNAME_MISMATCH$/

/** A service message or body excerpt is cut to this many characters: enough to say why. */
const MAX_EXCERPT_CHARS = 200
/** A message field is read this far, its whitespace folded, then cut to MAX_EXCERPT_CHARS. */
const MAX_MESSAGE_READ_CHARS = 4 * MAX_EXCERPT_CHARS
/** An HTML error page says why near its start (after its styles): the rest is never read. */
const MAX_HTML_READ_CHARS = 64 * 1024
const MESSAGE_FIELDS = ['message', 'error_description', 'error', 'detail', 'errors'] as const
const HTML_ENTITIES = { nbsp: ' ', lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' }

/** An error thrown by a request (network, TLS, proxy tunnel), as a failure. */
export function networkFailure(error: unknown): Failure {
  const { code, statusCode } = (error ?? {}) as { code?: unknown; statusCode?: unknown }
  if (code === 'ERR_PROXY_TUNNEL') {
    return { type: 'proxy', status: typeof statusCode === 'number' ? statusCode : undefined }
  }
  const message = errorMessage(error)
  const unnamed = /socket hang up/i.test(message) ? 'ECONNRESET' : 'ERROR'
  return { type: 'network', code: typeof code === 'string' ? code : unnamed, message }
}

/** Whether another attempt may help: 429, 5XX, a moment's network trouble, the proxy's own. */
export function isRetryable(failure: Failure): boolean {
  if (failure.type === 'status') return isRetryableStatus(failure.response.status)
  if (failure.type === 'network') return RETRYABLE_NETWORK_CODE.test(failure.code)
  if (failure.type === 'proxy') return !isProxyRefusal(failure.status)
  return failure.type === 'timeout'
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status < 600)
}

/** A proxy's 4XX to CONNECT (407 wrong credentials, 403 not allowed) is for the user to fix. */
function isProxyRefusal(status: number | undefined): status is number {
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429
}

/** "opened no tunnel", "answered HTTP 502 Bad Gateway": what the proxy did. */
function proxyAnswer(status: number | undefined): string {
  return status === undefined ? 'opened no tunnel' : `answered HTTP ${statusText(status)}`
}

/** A short reason for a retry's log line (only retryable failures are retried). */
export function failureSummary(failure: Failure): string {
  if (failure.type === 'status') return `HTTP ${statusText(failure.response.status)}`
  if (failure.type === 'timeout') {
    return `no complete answer within ${formatSeconds(failure.deadlineMs)}`
  }
  if (failure.type === 'network') {
    return `${failure.code} (${withoutFinalStop(nodeMessage(failure.message))})`
  }
  return failure.type === 'proxy' ? `the proxy ${proxyAnswer(failure.status)}` : failure.type
}

/**
 * The final error for a request: complete sentences, redacted before the error exists.
 * `budgetStopped` says the retries stopped because the run's outage budget ran out.
 */
export function failureError(
  scene: FailureScene,
  failure: Failure,
  attempts: number,
  budgetStopped: boolean
): ServiceError {
  const { advice, proxy } = scene
  const call = callName(scene.request)
  // Scheme, host and port only: a path, query or user name may hold a secret.
  const address = `${scene.baseUrl.protocol}//${hostPort(scene.baseUrl)}`
  const via = proxy ? ` through the proxy ${proxy}` : ''
  const checkAddress = capitalized(advice.checkAddress)
  const budget = formatSeconds(scene.budgetMs)
  const after = attempts > 1 ? ` after ${attempts} attempts` : ''
  const stopped = budgetStopped
    ? ` Retries stopped there: another would overrun this run's outage budget of ${budget}.`
    : ''
  const status = 'response' in failure ? failure.response.status : undefined
  const make = (kind: ServiceError['kind']) => (message: string) =>
    new ServiceError(scene.redactor.redact(message), { call, kind, status })
  const [outage, protocol, configuration, rejected] = (
    ['outage', 'protocol', 'configuration', 'rejected'] as const
  ).map(make)

  switch (failure.type) {
    case 'budget-spent':
      return outage(
        `${call} was not sent: the service was unavailable for this run's whole outage budget of ${budget} already. Try again later.`
      )
    case 'timeout': {
      const cut = failure.budgetCut ? " (what was left of this run's outage budget)" : ''
      return outage(
        `${call} got no complete answer within ${formatSeconds(failure.deadlineMs)}${cut}${after}.${stopped} The service is unavailable or too slow: try again later, or ${advice.changeWait}.`
      )
    }
    case 'unexpected':
      return protocol(
        `${call} answered HTTP ${statusText(failure.response.status)}, but not with the documented answer (expected ${failure.expected}); it sent: ${bodyExcerpt(failure.response.body, scene.redactor)}. ${checkAddress}: it must point at the service's root.`
      )
    case 'too-large':
      return protocol(
        `${call} answered with more than ${failure.capBytes / 2 ** 20} MiB (the response size cap), so the answer was not used. ${checkAddress}: it must point at the service's root.`
      )
    case 'proxy': {
      if (!isProxyRefusal(failure.status)) {
        return outage(
          `${call} could not reach ${address}: the proxy ${proxy} ${proxyAnswer(failure.status)}${after}.${stopped} The proxy or the service is unavailable: try again later, or check HTTPS_PROXY.`
        )
      }
      const todo =
        failure.status === 407
          ? 'Check the proxy user name and password in HTTPS_PROXY.'
          : 'The proxy does not allow this connection: ask its administrators, or add the service host to NO_PROXY if the runner can reach it directly.'
      return configuration(
        `${call} was not sent: the proxy ${proxy} refused to open a tunnel to the service with HTTP ${statusText(failure.status)}. ${todo}`
      )
    }
    case 'network': {
      const { code } = failure
      const said = `${code}: ${withoutFinalStop(nodeMessage(failure.message))}`
      if (code === 'ENOTFOUND') {
        // Through a proxy, the only name this process looks up is the proxy's.
        return configuration(
          proxy
            ? `${call} was not sent: the proxy host ${proxy} was not found (ENOTFOUND). Check HTTPS_PROXY.`
            : `${call} was not sent: the host of ${address} was not found (ENOTFOUND). ${checkAddress}: the host name may be mistyped.`
        )
      }
      if (CERTIFICATE_ERROR.test(code)) {
        return protocol(
          `${call} was not sent: the TLS certificate of ${address} is not trusted (${said}). ${checkAddress}. If the service uses a private certificate authority, set NODE_EXTRA_CA_CERTS to that authority's PEM file in the environment.`
        )
      }
      if (code.startsWith('HPE_')) {
        return outage(
          `${call} got a malformed answer from ${address}${via}${after} (${said}).${stopped} The service, or a proxy in front of it, is in trouble: try again later.`
        )
      }
      if (code === 'EPROTO' || code.startsWith('ERR_SSL_')) {
        return protocol(
          `${call} failed: ${address}${via} did not answer as an HTTPS server (${said}). ${checkAddress}: it must be the service's HTTPS address.`
        )
      }
      return outage(
        `${call} could not reach ${address}${via}${after} (${said}).${stopped} The service is unreachable: try again later; if this persists, ${advice.checkAddress}, and HTTPS_PROXY / NO_PROXY if the runner reaches the service through a proxy.`
      )
    }
    case 'status': {
      const { response } = failure
      const code = statusText(response.status)
      if (response.status >= 300 && response.status < 400) {
        const location = response.headers.location
        const url = location ? URL.parse(location, scene.baseUrl) : undefined
        const invalid = location ? ' to an address that is not a valid URL' : ''
        const target = url ? ` to ${url.protocol}//${hostPort(url)}` : invalid
        return protocol(
          `${call} was answered with HTTP ${code}, a redirect${target}. Redirects are never followed, so that the API key never reaches another origin. If the new address is the service and you trust it, ${advice.checkAddress} and use that address.`
        )
      }
      const said = withoutFinalStop(serviceMessage(response.body, scene.redactor))
      if (isRetryableStatus(response.status)) {
        const todo =
          response.status === 429
            ? 'The service is rate limiting requests: try again later, or send less often.'
            : 'The service is unavailable: try again later.'
        return outage(`${call} failed with HTTP ${code}${after}: ${said}.${stopped} ${todo}`)
      }
      if (response.status >= 400 && response.status < 500) {
        return rejected(
          `${call} was rejected with HTTP ${code}: ${said}. ${rejectionAdvice(response.status, advice)}`
        )
      }
      return protocol(
        `${call} got an unexpected HTTP ${code}: ${said}. ${checkAddress}: it must point at the service.`
      )
    }
  }
}

/** What to do about a 4XX. */
function rejectionAdvice(status: number, advice: FailureAdvice): string {
  if (status === 401 || status === 403) {
    return `The service rejected the API key: ${advice.checkApiKey}.`
  }
  if (status === 404) {
    return `${capitalized(advice.checkAddress)} (it must be the service's root) and any id in the request.`
  }
  if (status === 400 || status === 422) {
    return 'Check the values sent: the service says which one it refuses.'
  }
  if (status === 413) return 'The request is too large for the service: send less at once.'
  return 'The service refused the request.'
}

/**
 * What the service said: the message field of a JSON error body, or else an excerpt of the body.
 * Only the start of either is read (Redactor.excerpt), so a megabyte answer costs no more than a
 * short one, and a cut never leaves part of a secret behind.
 */
export function serviceMessage(body: string, redactor: Redactor): string {
  const found = messageField(parseJsonSafely(body))
  const said = found && collapseWhitespace(redactor.excerpt(found, MAX_MESSAGE_READ_CHARS))
  return said ? truncateText(said, MAX_EXCERPT_CHARS) : bodyExcerpt(body, redactor)
}

function messageField(parsed: unknown): string | undefined {
  if (typeof parsed === 'string') return parsed
  if (!isJsonObject(parsed)) return undefined
  for (const field of MESSAGE_FIELDS) {
    const value = parsed[field]
    if (typeof value === 'string' && value.trim()) return value
    // { "error": { "message": "..." } } is common enough to look one level down.
    const nested = isJsonObject(value) ? value['message'] : undefined
    if (typeof nested === 'string' && nested.trim()) return nested
    if (value !== undefined && value !== null && typeof value !== 'string') {
      return JSON.stringify(value)
    }
  }
  return undefined
}

/**
 * One line without secrets, whitespace collapsed, HTML tags stripped if it looks like HTML, at most
 * 200 chars, read from the body's first MAX_HTML_READ_CHARS. Each pattern consumes what it starts
 * on (an unclosed comment or script runs to the end), so none is retried at every "<".
 */
export function bodyExcerpt(body: string, redactor: Redactor): string {
  let text = redactor.excerpt(body, MAX_HTML_READ_CHARS)
  if (/^\s*<(!doctype|html|head|body|\?xml|[a-z][a-z0-9]*[\s>])/i.test(text)) {
    text = text
      .replace(/<(script|style)\b[^<>]*(?:>[\s\S]*?(?:<\/\1\s*>|$)|$)/gi, ' ')
      .replace(/<!--[\s\S]*?(?:-->|$)/g, ' ')
      .replace(/<[^<>]*>/g, ' ')
      .replace(
        /&(nbsp|lt|gt|quot|#39|amp);/g,
        (_, name: keyof typeof HTML_ENTITIES) => HTML_ENTITIES[name]
      )
  }
  text = collapseWhitespace(text)
  return text ? truncateText(text, MAX_EXCERPT_CHARS) : '(empty body)'
}

/**
 * Node's own message, without its advice to run Node differently (`--use-system-ca`): the action
 * cannot take it, and gives its own (NODE_EXTRA_CA_CERTS).
 */
export function nodeMessage(message: string): string {
  const kept = message.split(';').filter(clause => !clause.includes('--use-system-ca'))
  return collapseWhitespace(kept.join(';'))
}

/** "503 Service Unavailable". */
function statusText(status: number): string {
  const reason = STATUS_CODES[status]
  return reason ? `${status} ${reason}` : `${status}`
}

/** Advice clauses start in lower case; a sentence that starts with one needs a capital. */
function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

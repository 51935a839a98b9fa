/**
 * The service's failures: why an attempt failed and whether another may help, who must act (the
 * kind), and the words a person reads, with what the service said. This layer never names an
 * input: the caller passes its advice in (FailureAdvice, and per-call StatusHints).
 */
import { STATUS_CODES } from 'node:http'
import { errorMessage, ServiceError, type FailureKind } from '../errors.ts'
import { isJsonObject, parseJsonSafely } from '../json.ts'
import type { Redactor } from '../redact.ts'
import {
  collapseWhitespace,
  endSentence,
  formatSeconds,
  plural,
  truncateText,
  withoutFinalStop
} from '../text.ts'
import { addressName, callName, type ServiceRequest, type ServiceResponse } from './request.ts'

/** How one attempt ended (any HTTP answer is a 'status'), or why a request was not sent. */
export type Failure =
  | { type: 'status'; response: ServiceResponse }
  /** No complete answer within the deadline; `budgetCut` when the outage budget shortened it. */
  | { type: 'timeout'; deadlineMs: number; budgetCut: boolean }
  | { type: 'network'; code: string; message: string }
  /** The proxy did not open a tunnel; `status` is its answer to CONNECT, when it gave one. */
  | { type: 'proxy'; status?: number }
  | { type: 'too-large'; capBytes: number }
  /** Not sent: the run's outage budget was spent by earlier requests. */
  | { type: 'budget-spent' }

/**
 * Network errors that mean "try again": the service or the path to it had a moment. ENOTFOUND is
 * not one: a name that does not exist is a typo. HPE_* (a malformed or oversized header) is
 * retried like a 5XX: proxies in trouble send such answers.
 */
const RETRYABLE_NETWORK_CODE =
  /^(ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|ETIMEDOUT|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ENETDOWN|HPE_.*)$/

/**
 * Certificate verification failures (CERT_HAS_EXPIRED, SELF_SIGNED_CERT_IN_CHAIN, HOSTNAME_MISMATCH,
 * UNABLE_TO_VERIFY_LEAF_SIGNATURE …): retrying cannot help, and the fix is configuration.
 */
const CERTIFICATE_ERROR = /^(?!ERR_SSL_).*CERT|^UNABLE_TO_|^INVALID_CA$|^HOSTNAME_MISMATCH$/

/** A service message or body excerpt is cut to this many characters: enough to say why. */
const MAX_EXCERPT_CHARS = 200
const MESSAGE_FIELDS = ['message', 'error_description', 'error', 'detail', 'errors'] as const
const HTML_ENTITIES: Record<string, string> = {
  nbsp: ' ',
  lt: '<',
  gt: '>',
  quot: '"',
  '#39': "'",
  amp: '&'
}

/** An error thrown by a request (network, TLS, proxy tunnel), as a failure. */
export function networkFailure(error: unknown): Failure {
  const { code, statusCode } = (error ?? {}) as { code?: unknown; statusCode?: unknown }
  if (code === 'ERR_PROXY_TUNNEL') {
    return { type: 'proxy', status: typeof statusCode === 'number' ? statusCode : undefined }
  }
  const message = errorMessage(error)
  const named = typeof code === 'string' ? code : undefined
  return {
    type: 'network',
    code: named ?? (/socket hang up/i.test(message) ? 'ECONNRESET' : 'ERROR'),
    message
  }
}

/** Whether another attempt may help: 429, 5XX, a moment's network trouble, the proxy's own. */
export function isRetryable(failure: Failure): boolean {
  switch (failure.type) {
    case 'status':
      return isRetryableStatus(failure.response.status)
    case 'timeout':
      return true
    case 'network':
      return RETRYABLE_NETWORK_CODE.test(failure.code)
    case 'proxy':
      return failure.status === undefined || !isProxyRefusal(failure.status)
    case 'too-large':
    case 'budget-spent':
      return false
  }
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status < 600)
}

/** A proxy's 4XX to CONNECT (407 wrong credentials, 403 not allowed) is for the user to fix. */
function isProxyRefusal(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429
}

/** What the user can do, in the caller's words; each is a clause that starts in lower case. */
export interface FailureAdvice {
  /** How to give each attempt more time, e.g. 'raise the timeout-seconds input'. */
  raiseTimeout: string
  /** How to correct the service address, e.g. 'check the base-url input'. */
  checkAddress: string
  /** How to correct the API key, e.g. "check the api-key input and the key's permissions". */
  checkApiKey: string
}

/** Where a request went, for the words of its failure. */
export interface FailureScene {
  request: ServiceRequest
  /** The service root. */
  baseUrl: URL
  /** "host:port" of the proxy in use; undefined when connecting directly. */
  proxy?: string
  advice: FailureAdvice
  redactor: Redactor
  /** The run's outage budget, for messages about it. */
  budgetMs: number
}

/** A short reason for a retry log line. */
export function failureSummary(failure: Failure): string {
  switch (failure.type) {
    case 'status':
      return `HTTP ${statusText(failure.response.status)}`
    case 'timeout':
      return `no complete answer within ${formatSeconds(failure.deadlineMs)}`
    case 'network':
      return `${failure.code} (${withoutFinalStop(nodeMessage(failure.message))})`
    case 'proxy':
      return failure.status === undefined
        ? 'the proxy opened no tunnel'
        : `the proxy answered HTTP ${statusText(failure.status)}`
    case 'too-large':
      return `an answer over ${byteSize(failure.capBytes)}`
    case 'budget-spent':
      return 'the outage budget is spent'
  }
}

/** What every sentence about one failed request is made of. */
interface Words {
  scene: FailureScene
  call: string
  /** " after 3 attempts", or nothing for one. */
  after: string
  /** The sentence that says the outage budget stopped the retries, or nothing. */
  stopped: string
  make: (message: string, kind: Exclude<FailureKind, 'input'>, status?: number) => ServiceError
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
  const call = callName(scene.request)
  const words: Words = {
    scene,
    call,
    after: attempts > 1 ? ` after ${plural(attempts, 'attempt')}` : '',
    stopped: budgetStopped
      ? ` Retries stopped there: another would overrun this run's outage budget of ${formatSeconds(scene.budgetMs)}.`
      : '',
    make: (message, kind, status) =>
      new ServiceError(scene.redactor.redact(message), { call, kind, status })
  }
  const { after, stopped, make } = words
  switch (failure.type) {
    case 'budget-spent':
      return make(
        `${call} was not sent: the service was unavailable for this run's whole outage budget ` +
          `of ${formatSeconds(scene.budgetMs)} already. Try again later.`,
        'outage'
      )
    case 'timeout': {
      const within = failure.budgetCut
        ? `${formatSeconds(failure.deadlineMs)} (what was left of this run's outage budget)`
        : formatSeconds(failure.deadlineMs)
      return make(
        `${call} got no complete answer within ${within}${after}.${stopped} ` +
          `The service is unavailable or too slow: try again later, or ${scene.advice.raiseTimeout}.`,
        'outage'
      )
    }
    case 'too-large':
      return make(
        `${call} answered with more than ${byteSize(failure.capBytes)} (the response size cap), ` +
          `so the answer was not used. ${capitalized(scene.advice.checkAddress)}: it must point at the service's root.`,
        'protocol'
      )
    case 'proxy':
      return proxyError(words, failure.status)
    case 'network':
      return networkError(words, failure.code, failure.message)
    case 'status':
      return statusError(words, failure.response)
  }
}

function proxyError({ scene, call, after, stopped, make }: Words, status?: number): ServiceError {
  const proxy = scene.proxy ?? 'in use'
  if (status !== undefined && isProxyRefusal(status)) {
    const advice =
      status === 407
        ? 'Check the proxy user name and password in HTTPS_PROXY.'
        : 'The proxy does not allow this connection: ask its administrators, or add the service host to NO_PROXY if the runner can reach it directly.'
    return make(
      `${call} was not sent: the proxy ${proxy} refused to open a tunnel to the service with HTTP ${statusText(status)}. ${advice}`,
      'configuration'
    )
  }
  const answer = status === undefined ? 'opened no tunnel' : `answered HTTP ${statusText(status)}`
  return make(
    `${call} could not reach ${addressName(scene.baseUrl)}: the proxy ${proxy} ${answer}${after}.${stopped} ` +
      'The proxy or the service is unavailable: try again later, or check HTTPS_PROXY.',
    'outage'
  )
}

function networkError(words: Words, code: string, message: string): ServiceError {
  const { scene, call, after, stopped, make } = words
  const address = addressName(scene.baseUrl)
  const via = scene.proxy ? ` through the proxy ${scene.proxy}` : ''
  const checkAddress = capitalized(scene.advice.checkAddress)
  const said = `${code}: ${withoutFinalStop(nodeMessage(message))}`
  if (code === 'ENOTFOUND') {
    // Through a proxy, the only name this process looks up is the proxy's.
    return scene.proxy
      ? make(
          `${call} was not sent: the proxy host ${scene.proxy} was not found (ENOTFOUND). Check HTTPS_PROXY.`,
          'configuration'
        )
      : make(
          `${call} was not sent: the host of ${address} was not found (ENOTFOUND). ` +
            `${checkAddress}: the host name may be mistyped.`,
          'configuration'
        )
  }
  if (CERTIFICATE_ERROR.test(code)) {
    return make(
      `${call} was not sent: the TLS certificate of ${address} is not trusted (${said}). ` +
        `${checkAddress}. If the service uses a private certificate authority, ` +
        `set NODE_EXTRA_CA_CERTS to that authority's PEM file in the step's env.`,
      'protocol'
    )
  }
  if (code.startsWith('HPE_')) {
    return make(
      `${call} got a malformed answer from ${address}${via}${after} (${said}).${stopped} ` +
        'The service, or a proxy in front of it, is in trouble: try again later.',
      'outage'
    )
  }
  if (code === 'EPROTO' || code.startsWith('ERR_SSL_')) {
    return make(
      `${call} failed: ${address}${via} did not answer as an HTTPS server (${said}). ` +
        `${checkAddress}: it must be the service's HTTPS address.`,
      'protocol'
    )
  }
  return make(
    `${call} could not reach ${address}${via}${after} (${said}).${stopped} ` +
      `The service is unreachable: try again later; if this persists, ${scene.advice.checkAddress}, ` +
      'and HTTPS_PROXY / NO_PROXY if the runner reaches the service through a proxy.',
    'outage'
  )
}

function statusError(words: Words, response: ServiceResponse): ServiceError {
  const { scene, call, after, stopped, make } = words
  const { advice } = scene
  const { status } = response
  const hint = scene.request.hints?.[status]
  const withHint = (text: string): string => (hint ? `${text} ${endSentence(hint)}` : text)

  if (status >= 300 && status < 400) {
    const target = redirectTarget(response.headers.location, scene.baseUrl)
    return make(
      `${call} was answered with HTTP ${statusText(status)}, ${target ? `a redirect to ${target}` : 'a redirect'}. ` +
        'The action does not follow redirects, so that the API key never reaches another origin. ' +
        withHint(
          `If the new address is the service and you trust it, ${advice.checkAddress} and use that address.`
        ),
      'protocol',
      status
    )
  }
  const said = `: ${withoutFinalStop(serviceMessage(response.body, scene.redactor))}`
  if (isRetryableStatus(status)) {
    const text =
      status === 429
        ? 'The service is rate limiting requests: try again later, or send less often.'
        : 'The service is unavailable: try again later.'
    return make(
      `${call} failed with HTTP ${statusText(status)}${after}${said}.${stopped} ${withHint(text)}`,
      'outage',
      status
    )
  }
  if (status >= 400 && status < 500) {
    return make(
      `${call} was rejected with HTTP ${statusText(status)}${said}. ${withHint(rejectionAdvice(status, advice))}`,
      'rejected',
      status
    )
  }
  return make(
    `${call} got an unexpected HTTP ${statusText(status)}${said}. ` +
      withHint(`${capitalized(advice.checkAddress)}: it must point at the service.`),
    'protocol',
    status
  )
}

/** What to do about a 4XX. */
function rejectionAdvice(status: number, advice: FailureAdvice): string {
  switch (status) {
    case 401:
    case 403:
      return `The service rejected the API key: ${advice.checkApiKey}.`
    case 404:
      return `${capitalized(advice.checkAddress)} (it must be the service's root) and any id in the request.`
    case 400:
    case 422:
      return 'Check the values sent: the service says which one it refuses.'
    case 413:
      return 'The request is too large for the service: send less at once.'
    default:
      return 'The service refused the request.'
  }
}

/** A redirect's target by scheme, host and port only: its path or query may carry a secret. */
function redirectTarget(location: string | undefined, base: URL): string | undefined {
  if (!location) return undefined
  try {
    return addressName(new URL(location, base))
  } catch {
    return 'an address that is not a valid URL'
  }
}

/** The error for a 2XX whose body is not the documented answer. */
export function unexpectedResponse(
  scene: Pick<FailureScene, 'request' | 'advice' | 'redactor'>,
  response: ServiceResponse,
  expected: string
): ServiceError {
  const call = callName(scene.request)
  const message =
    `${call} answered HTTP ${statusText(response.status)}, but not with the documented answer ` +
    `(expected ${expected}); it sent: ${bodyExcerpt(scene.redactor.redact(response.body))}. ` +
    `${capitalized(scene.advice.checkAddress)}: it must point at the service's root.`
  return new ServiceError(scene.redactor.redact(message), {
    call,
    kind: 'protocol',
    status: response.status
  })
}

/**
 * What the service said: the message field of a JSON error body, or else an excerpt of the body.
 * Redacted before it is shortened, so a cut can never leave part of a secret behind.
 */
export function serviceMessage(body: string, redactor: Redactor): string {
  const found = messageField(parseJsonSafely(body))
  const text = found && truncateText(collapseWhitespace(redactor.redact(found)), MAX_EXCERPT_CHARS)
  return text || bodyExcerpt(redactor.redact(body))
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

/** One line, whitespace collapsed, HTML tags stripped if it looks like HTML, at most 200 chars. */
export function bodyExcerpt(body: string): string {
  let text = body
  if (/^\s*<(!doctype|html|head|body|\?xml|[a-z][a-z0-9]*[\s>])/i.test(text)) {
    text = text
      .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<[^>]*>/g, ' ')
      .replace(/&(nbsp|lt|gt|quot|#39|amp);/g, (_, name: string) => HTML_ENTITIES[name])
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

/** "10 MiB", "64 KiB", "1000 bytes". */
function byteSize(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return plural(bytes, 'byte')
}

/** Advice clauses start in lower case; a sentence that starts with one needs a capital. */
function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

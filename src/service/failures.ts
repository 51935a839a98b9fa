/**
 * The words a person reads about a failed request, and its kind (who must act).
 * This layer never names an input: the caller passes its advice in (FailureAdvice, and per-call
 * StatusHints), so the same words work for the action and for any other caller.
 */
import { STATUS_CODES } from 'node:http'
import { ServiceError, type ServiceErrorDetails } from '../errors.ts'
import type { Redactor } from '../redact.ts'
import {
  collapseWhitespace,
  endSentence,
  formatSeconds,
  plural,
  withoutFinalStop
} from '../text.ts'
import { addressName, callName, type ServiceRequest, type ServiceResponse } from './request.ts'
import { isConfigurationProxyStatus, isRetryableStatus, type Failure } from './retry.ts'
import { extractServiceMessage, bodyExcerpt } from './service-message.ts'

/** What the user can do, in the caller's words; each is a clause that starts in lower case. */
export interface FailureAdvice {
  /** How to give each attempt more time, e.g. 'raise the timeout-seconds input'. */
  raiseTimeout: string
  /** How to correct the service address, e.g. 'check the base-url input'. */
  checkAddress: string
  /** How to correct the API key, e.g. "check the api-key input and the key's permissions". */
  checkApiKey: string
}

/** Advice for a caller that gives none. */
export const GENERIC_ADVICE: FailureAdvice = {
  raiseTimeout: 'raise the timeout',
  checkAddress: 'check the service address',
  checkApiKey: 'check the API key and its permissions'
}

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
  const { advice, redactor } = scene
  const redact = (text: string): string => redactor.redact(text)
  const make = (message: string, details: Omit<ServiceErrorDetails, 'call' | 'attempts'>) =>
    new ServiceError(redact(message), { call, attempts, ...details })
  const address = addressName(scene.baseUrl)
  const via = scene.proxy ? ` through the proxy ${scene.proxy}` : ''
  const after = attempts > 1 ? ` after ${plural(attempts, 'attempt')}` : ''
  const stopped = budgetStopped
    ? ` Retries stopped there: another would overrun this run's outage budget of ${formatSeconds(scene.budgetMs)}.`
    : ''

  switch (failure.type) {
    case 'budget-spent':
      return make(
        `${call} was not sent: the service was unavailable for this run's whole outage budget ` +
          `of ${formatSeconds(scene.budgetMs)} already. Try again later.`,
        { kind: 'outage' }
      )
    case 'timeout': {
      const within = failure.budgetCut
        ? `${formatSeconds(failure.deadlineMs)} (what was left of this run's outage budget)`
        : formatSeconds(failure.deadlineMs)
      return make(
        `${call} got no complete answer within ${within}${after}.${stopped} ` +
          `The service is unavailable or too slow: try again later, or ${advice.raiseTimeout}.`,
        { kind: 'outage' }
      )
    }
    case 'too-large':
      return make(
        `${call} answered with more than ${byteSize(failure.capBytes)} (the response size cap), ` +
          `so the answer was not used. ${capitalized(advice.checkAddress)}: it must point at the service's root.`,
        { kind: 'protocol' }
      )
    case 'proxy':
      return proxyError(call, scene, failure.status, after, stopped, make)
    case 'network':
      return networkError(call, scene, failure, address, via, after, stopped, make)
    case 'status':
      return statusError(call, scene, failure.response, after, stopped, make)
  }
}

type Make = (
  message: string,
  details: Omit<ServiceErrorDetails, 'call' | 'attempts'>
) => ServiceError

function proxyError(
  call: string,
  scene: FailureScene,
  status: number | undefined,
  after: string,
  stopped: string,
  make: Make
): ServiceError {
  const proxy = scene.proxy ?? 'in use'
  if (status !== undefined && isConfigurationProxyStatus(status)) {
    const advice =
      status === 407
        ? 'Check the proxy user name and password in HTTPS_PROXY.'
        : 'The proxy does not allow this connection: ask its administrators, or add the service host to NO_PROXY if the runner can reach it directly.'
    return make(
      `${call} was not sent: the proxy ${proxy} refused to open a tunnel to the service with HTTP ${statusText(status)}. ${advice}`,
      { kind: 'configuration' }
    )
  }
  const answer = status === undefined ? 'opened no tunnel' : `answered HTTP ${statusText(status)}`
  return make(
    `${call} could not reach ${addressName(scene.baseUrl)}: the proxy ${proxy} ${answer}${after}.${stopped} ` +
      'The proxy or the service is unavailable: try again later, or check HTTPS_PROXY.',
    { kind: 'outage' }
  )
}

function networkError(
  call: string,
  scene: FailureScene,
  failure: { code: string; message: string },
  address: string,
  via: string,
  after: string,
  stopped: string,
  make: Make
): ServiceError {
  const { advice } = scene
  const { code } = failure
  const said = `${code}: ${withoutFinalStop(nodeMessage(failure.message))}`
  if (code === 'ENOTFOUND') {
    // Through a proxy, the only name this process looks up is the proxy's.
    return scene.proxy
      ? make(
          `${call} was not sent: the proxy host ${scene.proxy} was not found (ENOTFOUND). Check HTTPS_PROXY.`,
          { kind: 'configuration' }
        )
      : make(
          `${call} was not sent: the host of ${address} was not found (ENOTFOUND). ` +
            `${capitalized(advice.checkAddress)}: the host name may be mistyped.`,
          { kind: 'configuration' }
        )
  }
  if (CERTIFICATE_ERROR_CODES.has(code)) {
    return make(
      `${call} was not sent: the TLS certificate of ${address} is not trusted (${said}). ` +
        `${capitalized(advice.checkAddress)}. If the service uses a private certificate authority, ` +
        `set NODE_EXTRA_CA_CERTS to that authority's PEM file in the step's env.`,
      { kind: 'protocol' }
    )
  }
  if (code.startsWith('HPE_')) {
    return make(
      `${call} got a malformed answer from ${address}${via}${after} (${said}).${stopped} ` +
        'The service, or a proxy in front of it, is in trouble: try again later.',
      { kind: 'outage' }
    )
  }
  if (code === 'EPROTO' || code.startsWith('ERR_SSL_')) {
    return make(
      `${call} failed: ${address}${via} did not answer as an HTTPS server (${said}). ` +
        `${capitalized(advice.checkAddress)}: it must be the service's HTTPS address.`,
      { kind: 'protocol' }
    )
  }
  return make(
    `${call} could not reach ${address}${via}${after} (${said}).${stopped} ` +
      `The service is unreachable: try again later; if this persists, ${advice.checkAddress}, ` +
      'and HTTPS_PROXY / NO_PROXY if the runner reaches the service through a proxy.',
    { kind: 'outage' }
  )
}

function statusError(
  call: string,
  scene: FailureScene,
  response: ServiceResponse,
  after: string,
  stopped: string,
  make: Make
): ServiceError {
  const { advice, redactor } = scene
  const { status, headers, body } = response
  const hint = scene.request.hints?.[status]
  const withHint = (text: string): string => (hint ? `${text} ${endSentence(hint)}` : text)

  if (status >= 300 && status < 400) {
    const target = redirectTarget(headers.location, scene.baseUrl)
    return make(
      `${call} was answered with HTTP ${statusText(status)}, ${target ? `a redirect to ${target}` : 'a redirect'}. ` +
        'The action does not follow redirects, so that the API key never reaches another origin. ' +
        withHint(
          `If the new address is the service and you trust it, ${advice.checkAddress} and use that address.`
        ),
      { kind: 'protocol', status, serviceMessage: target }
    )
  }

  const serviceMessage = extractServiceMessage(body, redactor)
  const said = `: ${withoutFinalStop(serviceMessage)}`
  if (isRetryableStatus(status)) {
    const text =
      status === 429
        ? 'The service is rate limiting requests: try again later, or send less often.'
        : 'The service is unavailable: try again later.'
    return make(
      `${call} failed with HTTP ${statusText(status)}${after}${said}.${stopped} ${withHint(text)}`,
      { kind: 'outage', status, serviceMessage }
    )
  }
  if (status >= 400 && status < 500) {
    return make(
      `${call} was rejected with HTTP ${statusText(status)}${said}. ${withHint(rejectionAdvice(status, advice))}`,
      { kind: 'rejected', status, serviceMessage }
    )
  }
  return make(
    `${call} got an unexpected HTTP ${statusText(status)}${said}. ` +
      withHint(`${capitalized(advice.checkAddress)}: it must point at the service.`),
    { kind: 'protocol', status, serviceMessage }
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

/**
 * Node's own message, without its advice to run Node differently (`--use-system-ca`): the action
 * cannot take it, and gives its own (NODE_EXTRA_CA_CERTS).
 */
export function nodeMessage(message: string): string {
  const kept = message.split(';').filter(clause => !clause.includes('--use-system-ca'))
  return collapseWhitespace(kept.join(';'))
}

/** For the client: an error for a 2XX whose body is not the documented answer. */
export function unexpectedResponse(
  scene: Pick<FailureScene, 'request' | 'advice' | 'redactor'>,
  response: ServiceResponse,
  expected: string
): ServiceError {
  const call = callName(scene.request)
  const excerpt = bodyExcerpt(scene.redactor.redact(response.body))
  const message = scene.redactor.redact(
    `${call} answered HTTP ${statusText(response.status)}, but not with the documented answer ` +
      `(expected ${expected}); it sent: ${excerpt}. ` +
      `${capitalized(scene.advice.checkAddress)}: it must point at the service's root.`
  )
  return new ServiceError(message, {
    call,
    kind: 'protocol',
    status: response.status,
    serviceMessage: excerpt
  })
}

/** "503 Service Unavailable". */
export function statusText(status: number): string {
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

/**
 * How a failure is classified. The failure policy decides on the kind:
 * - input: the user's configuration is wrong (bad input, missing key); nothing was sent.
 * - rejected: the service refused the request (4XX other than 429): the user must fix something.
 * - protocol: the answer was not what the interface promises (a redirect, a 2XX of the wrong
 *   shape): most often a base-url that points somewhere else.
 * - configuration: the runner's setup keeps the request from the service (a host name that does
 *   not exist, a proxy that refuses the tunnel): the user must fix it; never retried.
 * - outage: the service is unavailable (5XX, 429, timeout, network error): retried, and under
 *   fail-on-error=auto only a warning.
 */
export type FailureKind = 'input' | 'rejected' | 'protocol' | 'configuration' | 'outage'

/** A bad input. The message names the input and the accepted forms. */
export class InputError extends Error {
  readonly kind = 'input' as const
  readonly input: string
  constructor(input: string, message: string) {
    super(message)
    this.name = 'InputError'
    this.input = input
  }
}

export interface ServiceErrorDetails {
  /** The call, as "METHOD /path" (path relative to the service root, without the query). */
  call: string
  kind: Exclude<FailureKind, 'input'>
  /** HTTP status, when the service answered. */
  status?: number
  /** What the service said (its error message or body excerpt), already redacted. */
  serviceMessage?: string
  /** What the user can do about it. */
  hint?: string
  /** How many attempts were made. */
  attempts?: number
}

/** A call to the service that failed. The message is complete and meant for humans. */
export class ServiceError extends Error {
  readonly kind: ServiceErrorDetails['kind']
  readonly call: string
  readonly status?: number
  readonly serviceMessage?: string
  readonly attempts?: number
  constructor(message: string, details: ServiceErrorDetails) {
    super(message)
    this.name = 'ServiceError'
    this.kind = details.kind
    this.call = details.call
    this.status = details.status
    this.serviceMessage = details.serviceMessage
    this.attempts = details.attempts
  }
}

/** The kind of any thrown value; anything unexpected counts as a protocol failure. */
export function failureKind(error: unknown): FailureKind {
  if (error instanceof InputError || error instanceof ServiceError) return error.kind
  return 'protocol'
}

/** A one-line human message for any thrown value, never a stack trace. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}

/**
 * Who must act on a failure; the failure policy decides on it:
 * - input: an input is wrong (a bad value, a missing key); nothing was sent.
 * - rejected: the service refused the request (a 4XX other than 429): the user must fix something.
 * - protocol: the answer was not what the interface promises (a redirect, a 2XX of the wrong
 *   shape): most often a base-url that points somewhere else.
 * - configuration: the runner's setup keeps the request from the service (a host name that does
 *   not exist, a proxy that refuses the tunnel): the user must fix it; never retried.
 * - outage: the service is unavailable (5XX, 429, timeout, network error): retried, and under
 *   fail-on-error=auto only a warning.
 */
import { inert } from './helpers/text.ts'
import { Redactor } from './redact.ts'

export type FailureKind = 'input' | 'rejected' | 'protocol' | 'configuration' | 'outage'

/** An offending value is quoted only this far, so that 100 KB of junk never floods a log. */
export const QUOTED_VALUE_MAX_CHARS = 40

/** The value as a short, escaped JSON string literal, for an error message. */
export function quote(raw: string): string {
  const shown = quotedPart(raw)
  const literal = inert(JSON.stringify(shown))
  return shown === raw ? literal : `${literal} (${raw.length} characters)`
}

/**
 * At most QUOTED_VALUE_MAX_CHARS of a value, through the redactor's window: no part of a URL's
 * credentials is quoted, and a cut never splits a character.
 */
export function quotedPart(text: string): string {
  return new Redactor().excerpt(text, QUOTED_VALUE_MAX_CHARS)
}

/** The words of an input error, given how the door names the input ('Input "labels"', '--labels'). */
export type Saying = (subject: string) => string

/**
 * A bad input. The message names the input and the accepted forms; `problem` follows the input's
 * name (' must be …', ', line 3, …'). The message says 'Input "labels"'; a door words it its own
 * way with `saying`.
 */
export class InputError extends Error {
  readonly kind = 'input' as const
  /** The setting's name, as action.yml and the command line's flags spell it. */
  readonly input: string
  readonly saying: Saying
  /** A required setting that was not given (the API key): the door words it. */
  missing?: boolean
  constructor(input: string, problem: string | Saying) {
    const saying: Saying = typeof problem === 'string' ? named => `${named}${problem}` : problem
    super(saying(`Input "${input}"`))
    this.name = 'InputError'
    this.input = input
    this.saying = saying
  }
}

/** A call to the service that failed. The message is complete and meant for humans. */
export class ServiceError extends Error {
  readonly kind: Exclude<FailureKind, 'input'>
  /** The call, as "METHOD /path" (relative to the service root, without the query). */
  readonly call: string
  /** The HTTP status, when the service answered. */
  readonly status?: number
  constructor(message: string, details: Pick<ServiceError, 'call' | 'kind' | 'status'>) {
    super(message)
    this.name = 'ServiceError'
    this.kind = details.kind
    this.call = details.call
    this.status = details.status
  }
}

/** The kind of any thrown value; anything unexpected counts as a protocol failure. */
export function failureKind(error: unknown): FailureKind {
  return error instanceof InputError || error instanceof ServiceError ? error.kind : 'protocol'
}

/** A one-line human message for any thrown value, never a stack trace. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** What `read` gives, or undefined when it throws: a value that may be missing or malformed. */
export function attempt<T>(read: () => T): T | undefined {
  try {
    return read()
  } catch {
    return undefined
  }
}

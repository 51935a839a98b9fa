/** Why a GitHub API call of the lookup failed, as data: warning.ts words it. */

export type ApiFailure =
  | {
      type: 'status'
      /** "GET /repos/o/r/compare/a...b": the method and the path below the API root. */
      call: string
      status: number
      /** GitHub's own message, collapsed and cut; never holds the token. */
      message?: string
      /** The rate limit is exhausted (403 or 429 with x-ratelimit-remaining: 0, or Retry-After). */
      rateLimited: boolean
      /** When the rate limit resets, ISO 8601, when GitHub said. */
      resetAt?: string
    }
  | { type: 'redirect'; call: string; status: number }
  | { type: 'not-json'; call: string; status: number; contentType?: string }
  | { type: 'too-large'; call: string }
  | { type: 'shape'; call: string; what: string }
  | { type: 'network'; call: string; code: string; proxy?: string }
  | { type: 'proxy'; call: string; proxy: string; status: number }
  | { type: 'budget'; call: string; budgetMs: number }
  | { type: 'call-limit'; call: string }
  /** The lookup would not send this request (an over-long URL or Link header, a link outside the API). */
  | { type: 'refused'; call: string; reason: string }
  | { type: 'invalid-setup'; reason: string }

export class ApiError extends Error {
  readonly failure: ApiFailure
  constructor(failure: ApiFailure) {
    super(failure.type)
    this.name = 'ApiError'
    this.failure = failure
  }
}

/** Failures after which every other call would fail too. */
export function endsSearch(failure: ApiFailure): boolean {
  switch (failure.type) {
    case 'status':
      return failure.status === 401 || failure.rateLimited
    case 'shape':
    case 'refused':
      return false
    default:
      return true
  }
}

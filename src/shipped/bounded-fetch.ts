/**
 * The fetch Octokit calls, around the toolkit's: a redirect is a failure and is never followed
 * (the token must not travel with it), an answer is read whole but only up to
 * MAX_GITHUB_RESPONSE_BYTES, and an aborted signal ends the call at once, whatever stage the
 * underlying fetch is in.
 */
import { ApiError } from './api-failure.ts'

/** A bigger answer is refused: a compare of 250 commits and 300 files is far smaller. */
export const MAX_GITHUB_RESPONSE_BYTES = 10 * 1024 * 1024

const REDIRECT_MIN = 300
const REDIRECT_MAX = 399

export type Fetch = (url: string, init?: RequestInit) => Promise<Response>

/** `nameCall` names a URL's call in failures ("GET /repos/o/r/releases"). */
export function boundedFetch(fetch: Fetch, nameCall: (url: string) => string): Fetch {
  return async (url, init = {}) => {
    const call = nameCall(url)
    const signal = init.signal ?? undefined
    return untilAborted(signal, async () => {
      const response = await fetch(url, { ...init, redirect: 'manual' })
      if (response.status >= REDIRECT_MIN && response.status <= REDIRECT_MAX) {
        await response.body?.cancel().catch(() => undefined)
        throw new ApiError({ type: 'redirect', call, status: response.status })
      }
      const body = await readBounded(response, call)
      return new Response(hasNoBody(response.status) ? null : body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers
      })
    })
  }
}

/** The body, up to the bound; too-large as soon as the bound is passed. */
async function readBounded(response: Response, call: string): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(response.headers.get('content-length'))
  if (declared > MAX_GITHUB_RESPONSE_BYTES) {
    await response.body?.cancel().catch(() => undefined)
    throw new ApiError({ type: 'too-large', call })
  }
  if (!response.body) return new Uint8Array()
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let received = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    received += value.byteLength
    if (received > MAX_GITHUB_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined)
      throw new ApiError({ type: 'too-large', call })
    }
    chunks.push(value)
  }
  const body = new Uint8Array(received)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

/** Statuses whose Response may not carry a body. */
function hasNoBody(status: number): boolean {
  return status === 204 || status === 205 || status === 304
}

/** The work's result, or the signal's reason as soon as it aborts. */
function untilAborted<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  if (!signal) return work()
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error)
    signal.addEventListener('abort', onAbort, { once: true })
    work()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort))
  })
}

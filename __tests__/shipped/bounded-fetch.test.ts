/**
 * The fetch Octokit calls: redirects refused, answers bounded in size, and an aborted signal that
 * ends a call even when the fetch underneath does not listen. No sockets: fetch stands in.
 */
import { describe, expect, it } from '@jest/globals'
import { ApiError } from '../../src/shipped/api-failure.ts'
import {
  boundedFetch,
  MAX_GITHUB_RESPONSE_BYTES,
  type Fetch
} from '../../src/shipped/bounded-fetch.ts'

const URL_OF_CALL = 'https://api.github.com/repos/acme/shop/releases'
const nameCall = (): string => 'GET /repos/acme/shop/releases'

/** A body streamed in chunks of `chunkBytes`, `chunks` of them; records how many were pulled. */
function streamed(
  chunkBytes: number,
  chunks: number
): { body: ReadableStream<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
  let pulled = 0
  let cancelled = false
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled === chunks) return controller.close()
        pulled++
        controller.enqueue(new Uint8Array(chunkBytes))
      },
      cancel() {
        cancelled = true
      }
    },
    // Nothing is pulled until it is read.
    { highWaterMark: 0 }
  )
  return { body, pulled: () => pulled, cancelled: () => cancelled }
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    if (error instanceof ApiError) return error.failure
    throw error
  }
  throw new Error('it did not fail')
}

describe('boundedFetch', () => {
  it('hands back the answer whole, with its status and headers', async () => {
    const fetch: Fetch = async () =>
      new Response('{"ok":true}', {
        status: 200,
        headers: { 'content-type': 'application/json', link: '<x>; rel="next"' }
      })
    const response = await boundedFetch(fetch, nameCall)(URL_OF_CALL)
    expect(response.status).toBe(200)
    expect(response.headers.get('link')).toBe('<x>; rel="next"')
    expect(await response.json()).toEqual({ ok: true })
  })

  it('asks for redirects by hand, and refuses one instead of following it', async () => {
    const asked: (RequestRedirect | undefined)[] = []
    const fetch: Fetch = async (_url, init) => {
      asked.push(init?.redirect)
      return new Response(null, {
        status: 307,
        headers: { location: 'https://elsewhere.example/' }
      })
    }
    const failure = await failureOf(
      boundedFetch(fetch, nameCall)(URL_OF_CALL, { redirect: 'follow' })
    )
    expect(asked).toEqual(['manual'])
    expect(failure).toEqual({
      type: 'redirect',
      call: 'GET /repos/acme/shop/releases',
      status: 307
    })
  })

  it('stops reading past the bound and cancels the rest of the stream', async () => {
    const chunk = 1024 * 1024
    const stream = streamed(chunk, 64)
    const fetch: Fetch = async () => new Response(stream.body, { status: 200 })
    const failure = await failureOf(boundedFetch(fetch, nameCall)(URL_OF_CALL))
    expect(failure).toEqual({ type: 'too-large', call: 'GET /repos/acme/shop/releases' })
    expect(stream.pulled()).toBeLessThanOrEqual(MAX_GITHUB_RESPONSE_BYTES / chunk + 2)
    expect(stream.cancelled()).toBe(true)
  })

  it('keeps an answer of exactly the bound', async () => {
    const fetch: Fetch = async () => new Response(new Uint8Array(MAX_GITHUB_RESPONSE_BYTES))
    const response = await boundedFetch(fetch, nameCall)(URL_OF_CALL)
    expect((await response.arrayBuffer()).byteLength).toBe(MAX_GITHUB_RESPONSE_BYTES)
  })

  it('refuses a declared length past the bound without reading the body', async () => {
    const stream = streamed(1, 1)
    const fetch: Fetch = async () =>
      new Response(stream.body, {
        headers: { 'content-length': String(MAX_GITHUB_RESPONSE_BYTES + 1) }
      })
    const failure = await failureOf(boundedFetch(fetch, nameCall)(URL_OF_CALL))
    expect(failure).toMatchObject({ type: 'too-large' })
    expect(stream.pulled()).toBe(0)
  })

  it('ends a call when the signal aborts, even if the fetch underneath never answers', async () => {
    const fetch: Fetch = () => new Promise<Response>(() => {})
    const controller = new AbortController()
    const pending = boundedFetch(fetch, nameCall)(URL_OF_CALL, { signal: controller.signal })
    controller.abort(new Error('budget'))
    await expect(pending).rejects.toThrow('budget')
    await expect(
      boundedFetch(fetch, nameCall)(URL_OF_CALL, { signal: controller.signal })
    ).rejects.toThrow('budget')
  })
})

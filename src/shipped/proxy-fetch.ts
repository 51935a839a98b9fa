/**
 * The toolkit's fetch for the API URL: through the proxy @actions/http-client chooses for it
 * (https_proxy/HTTPS_PROXY, no_proxy/NO_PROXY, loopback always direct), as @actions/github's own
 * getProxyFetch does. Built here, per lookup, because getOctokit's default is fixed when the
 * module loads, for GITHUB_API_URL rather than the API URL given, and Octokit drops it as soon as
 * any `request` option is set.
 */
import { getProxyUrl, HttpClient } from '@actions/http-client'
import type { Fetch } from './bounded-fetch.ts'

export interface ProxyFetch {
  fetch: Fetch
  /** "host:port" of the proxy, for messages; never its credentials. */
  proxy?: string
  /** Closes the proxy's connections; idempotent. */
  close(): void
}

export async function proxyFetchFor(apiUrl: URL): Promise<ProxyFetch> {
  const dispatcher = new HttpClient().getAgentDispatcher(apiUrl.href)
  if (!dispatcher) {
    // Looked up per call: a test's interceptor may replace it after this module loads.
    return { fetch: (url, init) => globalThis.fetch(url, init), close: () => undefined }
  }
  // The same undici that @actions/http-client made the dispatcher with.
  const undici = await import('undici')
  type UndiciInit = Parameters<typeof undici.fetch>[1]
  return {
    fetch: (url, init) =>
      undici.fetch(url, { ...init, dispatcher } as UndiciInit) as unknown as Promise<Response>,
    proxy: proxyName(getProxyUrl(apiUrl.href)),
    close: () => void dispatcher.destroy().catch(() => undefined)
  }
}

/** "host:port" of a proxy URL. */
function proxyName(proxyUrl: string): string | undefined {
  try {
    const url = new URL(proxyUrl)
    return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`
  } catch {
    return undefined
  }
}

/**
 * Which proxy, if any, carries requests to the service. The rules are @actions/http-client's, read
 * through its public `lib/proxy` entry (which loads nothing else, unlike the package's main entry
 * and its undici): https_proxy / HTTPS_PROXY, then no_proxy / NO_PROXY, and loopback always direct.
 * The tunnel itself is Node's own (https.Agent's `proxyEnv`), given exactly the proxy chosen here.
 */
import { getProxyUrl } from '@actions/http-client/lib/proxy'

export interface ProxyRoute {
  /** The proxy URL as given, credentials included: only for the agent, never for messages. */
  href: string
  /** "host:port": how messages name the proxy. */
  name: string
  /** The decoded password, for the redactor; undefined when there is none. */
  password?: string
}

/** The proxy for requests to `target`, or undefined to connect directly. */
export function proxyFor(target: URL): ProxyRoute | undefined {
  const proxy = getProxyUrl(target)
  if (!proxy?.hostname) return undefined
  const port = proxy.port || (proxy.protocol === 'https:' ? '443' : '80')
  return {
    href: proxy.href,
    name: `${proxy.hostname}:${port}`,
    password: proxy.password || undefined
  }
}

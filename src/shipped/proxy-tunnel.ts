/**
 * The proxy for GitHub API calls, by the service calls' rules (@actions/http-client's getProxyUrl:
 * https_proxy/HTTPS_PROXY, no_proxy/NO_PROXY, loopback always direct), and the CONNECT tunnel
 * through it. The tunnel is opened here rather than by Node's agent (proxyEnv) because a CONNECT
 * that is never answered must end with the lookup's budget: Node's agent leaves that socket open.
 */
import * as http from 'node:http'
import * as https from 'node:https'
import type { Socket } from 'node:net'
import { getProxyUrl } from '@actions/http-client/lib/proxy'

export interface Proxy {
  url: URL
  /** "host:port", for messages: never the credentials. */
  name: string
}

/** The proxy to use for the API root, when there is one. */
export function proxyFor(root: URL): Proxy | undefined {
  const url = getProxyUrl(root)
  if (!url?.hostname) return undefined
  const port = url.port || (url.protocol === 'https:' ? '443' : '80')
  return { url, name: `${url.hostname}:${port}` }
}

/** The proxy answered CONNECT with something other than 200 (407: credentials, 403: refused). */
export class TunnelRefused extends Error {
  readonly status: number
  constructor(status: number) {
    super(`CONNECT answered ${status}`)
    this.name = 'TunnelRefused'
    this.status = status
  }
}

/** A socket tunnelled to host:port; destroyed, and rejected, when the signal aborts first. */
export function openTunnel(
  proxy: Proxy,
  host: string,
  port: number,
  signal: AbortSignal
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`
    const headers: Record<string, string> = { Host: authority }
    if (proxy.url.username || proxy.url.password) {
      const credentials = `${decodeURIComponent(proxy.url.username)}:${decodeURIComponent(proxy.url.password)}`
      headers['Proxy-Authorization'] = `Basic ${Buffer.from(credentials).toString('base64')}`
    }
    const client = proxy.url.protocol === 'https:' ? https : http
    const request = client.request({
      host: proxy.url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(proxy.name.slice(proxy.name.lastIndexOf(':') + 1)),
      method: 'CONNECT',
      path: authority,
      headers,
      agent: false
    })
    // The request's socket is destroyed by hand: destroying a CONNECT request that is still
    // waiting for its answer leaves the socket to the proxy open.
    let proxySocket: Socket | undefined
    request.on('socket', socket => {
      proxySocket = socket
      if (signal.aborted) socket.destroy()
    })
    const onAbort = (): void => {
      request.destroy()
      proxySocket?.destroy()
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    const done = (): void => signal.removeEventListener('abort', onAbort)
    request.on('connect', (response: http.IncomingMessage, socket: Socket) => {
      done()
      if (response.statusCode !== 200) {
        socket.destroy()
        reject(new TunnelRefused(response.statusCode ?? 0))
        return
      }
      if (signal.aborted) {
        socket.destroy()
        return
      }
      resolve(socket)
    })
    request.on('error', error => {
      done()
      reject(error)
    })
    request.end()
  })
}

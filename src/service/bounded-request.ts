/**
 * The one way this program reaches the network: a request bounded as a whole, with node:http(s)
 * itself. A redirect is an answer like any other, never followed; one deadline covers the whole
 * attempt (the proxy's tunnel, the upload and the full answer); the answer is read up to a cap;
 * names are looked up by a resolver that can be stopped; and every socket of an attempt that
 * fails or is stopped ends with it, a pending proxy CONNECT included.
 */
import { getProxyUrl } from '@actions/http-client/lib/proxy'
import * as http from 'node:http'
import * as https from 'node:https'
import { isIPv6 } from 'node:net'
import type { Duplex } from 'node:stream'
import * as tls from 'node:tls'
import type { ServiceResponse } from './request.ts'
import { stoppableLookup } from './resolver.ts'

/** What one request sends, and its bounds. */
export interface BoundedAsk {
  method: 'GET' | 'POST'
  headers: Record<string, string | number>
  body?: Buffer
  /** Bounds the attempt as a whole: connect, proxy tunnel, TLS, upload and the full answer. */
  deadlineMs: number
  /** A longer answer is not read further. */
  maxAnswerBytes: number
  /** Ends the attempt, and every socket it opened or used, once aborted. */
  signal?: AbortSignal
}

/** How a request ended: a whole answer of any status (a redirect too), or why there was none. */
export type RequestOutcome =
  | { type: 'status'; response: ServiceResponse }
  | { type: 'too-large'; capBytes: number }
  | { type: 'timeout'; deadlineMs: number }
  /** Its signal aborted, or its route was closed. */
  | { type: 'stopped' }
  /** What the request threw: a network, TLS or HTTP parser error, or the proxy's refusal. */
  | { type: 'error'; error: Error }

/**
 * The way to one origin: direct, or through the proxy that @actions/http-client's rule picks for
 * it (HTTPS_PROXY or HTTP_PROXY by its scheme, then NO_PROXY; loopback always direct), read
 * through its lib/proxy entry, which loads nothing else. With `keepAlive`, the socket of an
 * answered request waits (unref'd) for the next one, until close().
 */
export class Route {
  /** The proxy in use, with its credentials as the toolkit decodes them; undefined when direct. */
  readonly proxy: URL | undefined
  private readonly agent: http.Agent
  /** Names looked up so that close() can stop them: a resolver may never answer. */
  private readonly names = stoppableLookup()
  /**
   * The sockets of each request under way, which close() ends: the request then ends, stopped.
   * Only sockets: a request's own closures held by this long-lived route (a listener on its
   * signal, say) outlive young garbage, and with them its body and answer, which then pile up
   * until a full collection: streaming events, a quarter more memory at its peak.
   */
  private readonly underWay = new Set<Set<Duplex>>()
  private closed = false

  constructor(origin: URL, { keepAlive = false } = {}) {
    const found = getProxyUrl(origin)
    this.proxy = found?.hostname ? found : undefined
    this.agent = routeAgent(origin.protocol === 'https:', this.proxy, keepAlive)
  }

  /** Sends `ask` to `url`, of this route's origin. Never rejects: it says how the request ended. */
  request(url: URL, ask: BoundedAsk): Promise<RequestOutcome> {
    const { deadlineMs, maxAnswerBytes, signal } = ask
    if (this.closed || signal?.aborted) return Promise.resolve({ type: 'stopped' })
    const sockets = new Set<Duplex>()
    this.underWay.add(sockets)
    return new Promise(resolve => {
      let settled = false
      const chunks: Buffer[] = []
      let received = 0
      const settle = (outcome: RequestOutcome): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this.underWay.delete(sockets)
        signal?.removeEventListener('abort', stopped)
        // Listeners stay attached, so errors the destruction may still emit are swallowed.
        if (outcome.type !== 'status') destroyAll(sockets)
        resolve(outcome)
      }
      const stopped = (): void => settle({ type: 'stopped' })
      // Once closed, a socket ended by close() is the request stopped.
      const failed = (error: Error): void =>
        settle(this.closed ? { type: 'stopped' } : { type: 'error', error })
      const timer = setTimeout(() => settle({ type: 'timeout', deadlineMs }), deadlineMs)
      signal?.addEventListener('abort', stopped)

      const client = url.protocol === 'https:' ? https : http
      const options: AttemptOptions = {
        method: ask.method,
        headers: ask.headers,
        agent: this.agent,
        lookup: this.names.lookup,
        [ATTEMPT_SOCKETS]: sockets
      }
      let request: http.ClientRequest
      try {
        request = client.request(url, options)
      } catch (error) {
        // A scheme that is neither http nor https, or a header Node refuses (a line break).
        return failed(error as Error)
      }
      // A kept-alive socket from an earlier request is this attempt's too.
      request.on('socket', socket => sockets.add(socket))
      request.on('error', failed)
      request.on('response', answer => {
        answer.on('error', failed)
        answer.on('data', (chunk: Buffer) => {
          received += chunk.byteLength
          if (received > maxAnswerBytes) settle({ type: 'too-large', capBytes: maxAnswerBytes })
          else chunks.push(chunk)
        })
        answer.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8')
          const response = { status: answer.statusCode ?? 0, headers: answer.headers, body }
          settle({ type: 'status', response })
        })
      })
      request.end(ask.body)
    })
  }

  /** Stops every request under way, ends the idle sockets and stops the lookups. */
  close(): void {
    this.closed = true
    for (const sockets of this.underWay) destroyAll(sockets)
    this.agent.destroy()
    this.names.stop()
  }
}

/** The request option through which the agent tells an attempt of each socket it opens. */
const ATTEMPT_SOCKETS = Symbol('attempt sockets')

interface AttemptOptions extends http.RequestOptions {
  [ATTEMPT_SOCKETS]: Set<Duplex>
}

/** How an agent is given a socket it asked for, or why there is none. */
type SocketCallback = (error: Error | null, socket?: Duplex) => void

/**
 * An agent that tells each socket it opens to the attempt that asked for it (a request gets its
 * socket only once a tunnel is up, so destroying the request would leave a pending CONNECT open),
 * and that reaches the origin through the proxy's CONNECT tunnel when there is one: made here, not
 * by Node's own proxy support, which Node 20 lacks.
 */
function routeAgent(secure: boolean, proxy: URL | undefined, keepAlive: boolean): http.Agent {
  const Agent: typeof http.Agent = secure ? https.Agent : http.Agent
  class RouteAgent extends Agent {
    override createConnection(
      options: http.ClientRequestArgs,
      callback: SocketCallback
    ): Duplex | null | undefined {
      const sockets = (options as AttemptOptions)[ATTEMPT_SOCKETS]
      if (proxy === undefined) {
        const socket = super.createConnection(options, callback)
        if (socket) sockets.add(socket)
        return socket
      }
      openTunnel(proxy, options, sockets, (error, tunnel) => {
        if (tunnel === undefined) return callback(error)
        // TLS to the origin inside the tunnel: the proxy sees neither the request nor its answer.
        const socket = secure
          ? tls.connect({ ...(options as tls.ConnectionOptions), socket: tunnel })
          : tunnel
        sockets.add(socket)
        callback(null, socket)
      })
      return undefined
    }
  }
  return new RouteAgent({ keepAlive })
}

/** A CONNECT tunnel to the request's host and port, through the proxy, told to its attempt. */
function openTunnel(
  proxy: URL,
  options: http.ClientRequestArgs,
  sockets: Set<Duplex>,
  done: SocketCallback
): void {
  const host = options.host ?? ''
  const target = `${isIPv6(host) ? `[${host}]` : host}:${options.port}`
  const headers: Record<string, string> = { Host: target }
  if (proxy.username || proxy.password) {
    const credentials = Buffer.from(`${proxy.username}:${proxy.password}`).toString('base64')
    headers['Proxy-Authorization'] = `Basic ${credentials}`
  }
  const client = proxy.protocol === 'https:' ? https : http
  // The proxy's origin alone: its credentials go in Proxy-Authorization, never in Authorization.
  const connect = client.request(new URL(proxy.origin), {
    method: 'CONNECT',
    path: target,
    headers,
    agent: false,
    // The request's own lookup, which reaches here with its other options.
    lookup: options.lookup
  })
  connect.on('socket', socket => sockets.add(socket))
  connect.on('error', error => done(error))
  connect.once('connect', (answer, socket) => {
    if (answer.statusCode === 200) return done(null, socket)
    socket.destroy()
    const refused = new Error(`the proxy answered HTTP ${answer.statusCode} to CONNECT ${target}`)
    done(Object.assign(refused, { code: 'ERR_PROXY_TUNNEL', statusCode: answer.statusCode }))
  })
  connect.end()
}

function destroyAll(sockets: Set<Duplex>): void {
  for (const socket of sockets) socket.destroy()
  sockets.clear()
}

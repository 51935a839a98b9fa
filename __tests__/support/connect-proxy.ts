/**
 * A small HTTP CONNECT proxy on 127.0.0.1, for tests of HTTPS_PROXY / NO_PROXY handling.
 *
 * It records every CONNECT it receives and tunnels it to a target chosen by `route`, so a test
 * can use a hostname that does not resolve (TEST_SERVICE_HOST) and still reach a loopback server:
 * only a request that really went through the proxy can succeed.
 */
import { createServer, STATUS_CODES, type IncomingMessage } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'

export interface ConnectProxyOptions {
  /** Where to tunnel a CONNECT for host:port. Default: host:port itself. */
  route?: (host: string, port: number) => { host: string; port: number }
  /** A status to refuse every CONNECT with (407, 403, 502…), instead of tunnelling. */
  refuseWith?: number
}

export interface ConnectProxy {
  /** "http://127.0.0.1:<port>", for HTTPS_PROXY. */
  url: string
  port: number
  /** The authority ("host:port") of each CONNECT seen, in order. */
  connects: string[]
  /** The Proxy-Authorization header of each CONNECT seen (undefined when absent), in order. */
  proxyAuthorizations: (string | undefined)[]
  /** Destroys every open tunnel and stops listening. */
  close(): Promise<void>
}

/** Splits "host:port" or "[v6]:port". */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(authority)
  if (!match) return undefined
  return { host: match[1] ?? match[2], port: Number(match[3]) }
}

export async function startConnectProxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const route = options.route ?? ((host: string, port: number) => ({ host, port }))
  const connects: string[] = []
  const proxyAuthorizations: (string | undefined)[] = []
  const sockets = new Set<Duplex>()
  const track = (socket: Duplex): void => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  }

  const server = createServer((_request, response) => {
    response.writeHead(405, { 'Content-Type': 'text/plain' })
    response.end('This test proxy only tunnels CONNECT requests.\n')
  })
  server.on('connection', track)

  server.on('connect', (request: IncomingMessage, client: Duplex, head: Buffer) => {
    const authority = request.url ?? ''
    connects.push(authority)
    proxyAuthorizations.push(request.headers['proxy-authorization'])
    track(client)
    if (options.refuseWith !== undefined) {
      const status = options.refuseWith
      client.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Length: 0\r\n\r\n`)
      return
    }
    const requested = parseAuthority(authority)
    if (!requested) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n')
      return
    }
    const target = route(requested.host, requested.port)
    let established = false
    const upstream: Socket = connect(target.port, target.host, () => {
      established = true
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    track(upstream)
    upstream.on('error', () => {
      if (established) client.destroy()
      else client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
    })
    client.on('error', () => upstream.destroy())
    client.on('close', () => upstream.destroy())
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connects,
    proxyAuthorizations,
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

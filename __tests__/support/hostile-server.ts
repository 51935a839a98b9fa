/**
 * Small loopback servers that misbehave on purpose, for the end-to-end probes: an HTTPS service
 * whose every answer a test writes (echoing lines, oversized bodies and headers, hangs), and
 * CONNECT proxies that answer a fixed status or never answer. 127.0.0.1 only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import {
  createServer as createTcpServer,
  type AddressInfo,
  type Server,
  type Socket
} from 'node:net'
import { testCertificate } from '../../emulator/tls.ts'

export interface SeenRequest {
  method: string
  /** Path and query as received. */
  url: string
  headers: IncomingMessage['headers']
  body: string
}

export interface HostileServer {
  /** "https://127.0.0.1:<port>/" */
  url: string
  port: number
  requests: SeenRequest[]
  close(): Promise<void>
}

/** Keeps every socket of a server, so that close() can end hung ones at once. */
function trackSockets(server: Server): Set<Socket> {
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  return sockets
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  return (server.address() as AddressInfo).port
}

function closer(server: Server, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise<void>(resolve => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
}

/**
 * An HTTPS server (the suite's test certificate) that reads each request's body, records it and
 * lets `answer` reply, or not reply at all.
 */
export async function startHostileServer(
  answer: (request: SeenRequest, response: ServerResponse) => void
): Promise<HostileServer> {
  const { key, cert } = await testCertificate()
  const requests: SeenRequest[] = []
  const server = createHttpsServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8')
      }
      requests.push(seen)
      answer(seen, res)
    })
  })
  const sockets = trackSockets(server)
  const port = await listen(server)
  return { url: `https://127.0.0.1:${port}/`, port, requests, close: closer(server, sockets) }
}

/** Answers JSON with a status. */
export function replyJson(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  response.writeHead(status, { 'Content-Type': 'application/json' })
  response.end(text)
}

export interface BadProxy {
  /** "http://127.0.0.1:<port>", for HTTPS_PROXY. */
  url: string
  port: number
  /** Connections accepted, and the first line each sent (the CONNECT request line). */
  connections: number
  requestLines: string[]
  /** Sockets still open now: the action's CONNECT sockets it has not closed. */
  openSockets(): number
  close(): Promise<void>
}

/**
 * A CONNECT proxy that answers every CONNECT with `status` (407 with a Proxy-Authenticate
 * challenge), or, with no status, accepts the TCP connection and never answers.
 */
export async function startBadProxy(status?: 403 | 407): Promise<BadProxy> {
  const requestLines: string[] = []
  const proxy = {
    connections: 0,
    requestLines
  }
  const server = createTcpServer(socket => {
    proxy.connections++
    let head = ''
    socket.on('error', () => undefined)
    socket.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n\r\n')) return
      head += chunk.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      requestLines.push(head.split('\r\n')[0])
      if (status === 407) {
        socket.end(
          'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n'
        )
      } else if (status === 403) {
        socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n')
      }
    })
  })
  const sockets = trackSockets(server)
  const port = await listen(server)
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    port,
    openSockets: () => sockets.size,
    close: closer(server, sockets)
  })
}

/**
 * Real servers on 127.0.0.1 for the transport's tests: an HTTPS service whose behaviour each test
 * sets, and a proxy that accepts TCP but never answers. Each counts its open sockets, so a test
 * can see that the client closed them.
 */
import { createServer, type ServerOptions } from 'node:https'
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'

export interface RecordedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

export type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void

/** How long a test waits for a peer to see its sockets closed: "promptly". */
export const CLOSE_WAIT_MS = 500

export interface SocketCounter {
  /** TCP connections accepted (counted before TLS, so refused handshakes count too). */
  connections: number
  /** Accepted connections not yet closed. */
  readonly open: number
  /** Resolves once every accepted connection is closed, or rejects after `ms`. */
  allClosed(ms?: number): Promise<void>
}

function socketCounter(): SocketCounter & { track(socket: Socket): void } {
  const open = new Set<Socket>()
  const waiters = new Set<() => void>()
  return {
    connections: 0,
    get open() {
      return open.size
    },
    track(socket: Socket) {
      this.connections++
      open.add(socket)
      socket.on('close', () => {
        open.delete(socket)
        if (open.size === 0) for (const wake of waiters) wake()
      })
    },
    allClosed(ms = CLOSE_WAIT_MS) {
      if (open.size === 0) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const wake = (): void => {
          clearTimeout(timer)
          waiters.delete(wake)
          resolve()
        }
        const timer = setTimeout(() => {
          waiters.delete(wake)
          reject(new Error(`${open.size} socket(s) still open after ${ms} ms`))
        }, ms)
        waiters.add(wake)
      })
    }
  }
}

/** A loopback HTTPS server whose behaviour each test sets through `handle`. */
export interface TestServer extends SocketCounter {
  port: number
  origin: string
  requests: RecordedRequest[]
  handle: Handler
  close(): Promise<void>
}

export const okJson: Handler = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' })
  res.end('{"id":"ok"}')
}

export async function startServer(tls: ServerOptions, handle = okJson): Promise<TestServer> {
  const server = createServer(tls)
  const counter = socketCounter()
  const state: TestServer = Object.assign(counter, {
    port: 0,
    origin: '',
    requests: [] as RecordedRequest[],
    handle,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  })
  server.on('connection', (socket: Socket) => counter.track(socket))
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const index = state.requests.length
      state.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8')
      })
      state.handle(req, res, index)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  state.port = (server.address() as AddressInfo).port
  state.origin = `https://127.0.0.1:${state.port}`
  return state
}

export function respond(status: number, body = '', headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
    res.end(body)
  }
}

/** Answers with `failing` for the first `count` requests, then with `ok`. */
export function failFirst(count: number, failing: Handler, ok: Handler = okJson): Handler {
  return (req, res, index) => (index < count ? failing(req, res, index) : ok(req, res, index))
}

/** A TCP server that accepts connections and never says a word: a proxy stuck before CONNECT. */
export interface SilentServer extends SocketCounter {
  port: number
  url: string
  close(): Promise<void>
}

export async function startSilentServer(): Promise<SilentServer> {
  const counter = socketCounter()
  const sockets = new Set<Socket>()
  const server = createTcpServer(socket => {
    sockets.add(socket)
    // Reads (and drops) what comes, so that it sees the client's end of the connection.
    socket.resume()
    socket.on('error', () => {})
    counter.track(socket)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(counter, {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  })
}

/** A free loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = createTcpServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

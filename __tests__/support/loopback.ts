/**
 * Raw servers on 127.0.0.1 for what the emulator cannot be: a service whose answer a test writes
 * byte by byte (a trickle, a hang after a first answer), a peer that accepts TCP and never says a
 * word (a proxy stuck before CONNECT), a port with nothing on it. Each counts its sockets, so a
 * test can see that the client closed them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { testCertificate } from '../../emulator/tls.ts'

export type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void

export interface Loopback {
  port: number
  /** "https://127.0.0.1:<port>/" with a handler; "http://127.0.0.1:<port>" for a silent peer. */
  url: string
  /** TCP connections accepted (counted before TLS). */
  connections: number
  /** HTTP requests received. */
  requests: number
  handle?: Handler
  /** Resolves once every accepted connection is closed; rejects after `ms`. */
  allClosed(ms?: number): Promise<void>
  close(): Promise<void>
}

/** An HTTPS server (the suite's certificate) that lets `handle` answer; without one, a silent peer. */
export async function startLoopback(handle?: Handler): Promise<Loopback> {
  const open = new Set<Socket>()
  let server: Server
  const loopback: Loopback = {
    port: 0,
    url: '',
    connections: 0,
    requests: 0,
    handle,
    allClosed: (ms = 1000) =>
      new Promise((resolve, reject) => {
        const started = Date.now()
        const check = (): void => {
          if (open.size === 0) resolve()
          else if (Date.now() - started > ms) reject(new Error(`${open.size} socket(s) still open`))
          else setTimeout(check, 10)
        }
        check()
      }),
    close: () =>
      new Promise(resolve => {
        for (const socket of open) socket.destroy()
        server.close(() => resolve())
      })
  }
  const track = (socket: Socket): void => {
    loopback.connections++
    open.add(socket)
    socket.on('close', () => open.delete(socket))
    socket.on('error', () => undefined)
  }
  if (handle) {
    const { key, cert } = await testCertificate()
    server = createHttpsServer({ key, cert }, (request, response) => {
      request.resume()
      request.on('end', () => loopback.handle?.(request, response, loopback.requests++))
    })
    server.on('connection', track)
  } else {
    // Reads (and drops) what comes, so that it sees the client's end of the connection.
    server = createServer(socket => track(socket.resume()))
  }
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  loopback.port = (server.address() as AddressInfo).port
  loopback.url = handle
    ? `https://127.0.0.1:${loopback.port}/`
    : `http://127.0.0.1:${loopback.port}`
  return loopback
}

/** A free loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

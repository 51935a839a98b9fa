/**
 * The one bounded request, where neither caller shows it: an http: origin through a proxy, the
 * tunnel's name for an IPv6 host, a request whose signal has aborted, a scheme it cannot send. Its
 * deadline, cap, redirects, proxy refusals and sockets are proven through its callers: the
 * transport (service/transport.test.ts) and the token request (action/runner.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { TEST_SERVICE_HOST } from '../../emulator/tls.ts'
import { Route, type BoundedAsk } from '../../src/service/bounded-request.ts'
import { startConnectProxy } from '../support/connect-proxy.ts'
import { startLoopback } from '../support/loopback.ts'

const PROXY_ENV = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy']
const saved = { ...process.env }
const closing: Array<() => Promise<void> | void> = []
const GET: BoundedAsk = { method: 'GET', headers: {}, deadlineMs: 5000, maxAnswerBytes: 1024 }

/** A plain HTTP server on 127.0.0.1 that answers every request with its path. */
async function httpOrigin(): Promise<{ port: number; paths: string[] }> {
  const paths: string[] = []
  const server: Server = createServer((request, response) => {
    paths.push(request.url ?? '')
    response.end(request.url)
  })
  await new Promise<void>(done => server.listen(0, '127.0.0.1', done))
  closing.push(() => {
    server.closeAllConnections()
    server.close()
  })
  return { port: (server.address() as AddressInfo).port, paths }
}

/** A proxy that tunnels every CONNECT to this port on 127.0.0.1, whatever host it names. */
async function proxyTo(port: number): Promise<{ connects: string[] }> {
  const proxy = await startConnectProxy({ route: () => ({ host: '127.0.0.1', port }) })
  closing.push(() => proxy.close())
  process.env['HTTP_PROXY'] = proxy.url
  return proxy
}

/** One request through a route of its own, closed after. */
async function requestOnce(url: URL, ask: BoundedAsk = GET) {
  const route = new Route(url)
  closing.push(() => route.close())
  return route.request(url, ask)
}

beforeEach(() => {
  for (const name of PROXY_ENV) delete process.env[name]
})
afterEach(async () => {
  process.env = { ...saved }
  await Promise.all(closing.splice(0).map(close => close()))
})

describe('an http: origin', () => {
  it('is reached through HTTP_PROXY by a CONNECT tunnel, as an https: one is', async () => {
    const origin = await httpOrigin()
    const proxy = await proxyTo(origin.port)
    const outcome = await requestOnce(new URL(`http://${TEST_SERVICE_HOST}:${origin.port}/a?b=1`))
    expect(outcome).toMatchObject({ type: 'status', response: { status: 200, body: '/a?b=1' } })
    expect(proxy.connects).toEqual([`${TEST_SERVICE_HOST}:${origin.port}`])
  })

  it('at an IPv6 address is named in brackets in the CONNECT', async () => {
    const origin = await httpOrigin()
    const proxy = await proxyTo(origin.port)
    const outcome = await requestOnce(new URL(`http://[2001:db8::1]:${origin.port}/`))
    expect(outcome).toMatchObject({ type: 'status', response: { status: 200 } })
    expect(proxy.connects).toEqual([`[2001:db8::1]:${origin.port}`])
  })
})

describe('a request that cannot be sent', () => {
  it('opens no connection once its signal has aborted', async () => {
    const silent = await startLoopback()
    closing.push(() => silent.close())
    const signal = AbortSignal.abort()
    expect(await requestOnce(new URL(silent.url), { ...GET, signal })).toEqual({ type: 'stopped' })
    expect(silent.connections).toBe(0)
  })

  it('is an outcome, never a throw, when its scheme is neither http nor https', async () => {
    const outcome = await requestOnce(new URL('ftp://127.0.0.1/token'))
    expect(outcome).toMatchObject({ type: 'error', error: { code: 'ERR_INVALID_PROTOCOL' } })
  })
})

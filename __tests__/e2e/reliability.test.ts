/**
 * The bundled action against a misbehaving service: retries, timeouts, resets, redirects,
 * plain HTTP, wrong-shaped answers and proxies. Each run is a real process over real HTTPS.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { createServer, type Server } from 'node:net'
import { startConnectProxy } from '../support/connect-proxy.ts'
import { Emulator } from '../../emulator/emulator.ts'
import { actionAgainst } from '../support/run-action.ts'
import { TEST_SERVICE_HOST, testCertificate } from '../../emulator/tls.ts'

let emulator: Emulator
let otherOrigin: Emulator
let certPath: string
let action: ReturnType<typeof actionAgainst>

beforeAll(async () => {
  certPath = (await testCertificate()).certPath
  emulator = await Emulator.start()
  action = actionAgainst(emulator, certPath)
  otherOrigin = await Emulator.start()
})
afterAll(async () => {
  await emulator.close()
  await otherOrigin.close()
})
beforeEach(() => {
  emulator.reset()
  otherOrigin.reset()
})

const changes = () => emulator.requestsTo('POST /v2/change')

describe('retries', () => {
  it('retries 5XX until it succeeds: exactly as many requests as attempts', async () => {
    emulator.inject('POST /v2/change', { status: 502, body: 'bad gateway' }, 2)
    const result = await action({ 'max-attempts': '4' })
    expect(result.exitCode).toBe(0)
    expect(changes()).toHaveLength(3)
    expect(emulator.changes.has(result.outputs['change-id'])).toBe(true)
    expect(result.stdout).toMatch(/HTTP 502.*retry/i)
  })

  it('gives up after max-attempts on a permanent 5XX, then applies the failure policy', async () => {
    emulator.inject('POST /v2/change', { status: 500, body: '{"message":"db down"}' }, Infinity)
    const result = await action({ 'max-attempts': '3' })
    expect(changes()).toHaveLength(3)
    expect(result.exitCode).toBe(0)
    expect(result.outputs['error']).toContain('500')
    expect(result.outputs['error']).toContain('db down')
    expect(result.outputs['error']).toContain('3 attempts')
  })

  it('waits at least Retry-After on a 429', async () => {
    emulator.inject('POST /v2/change', { status: 429, headers: { 'Retry-After': '2' } })
    const result = await action({ 'max-attempts': '2' })
    expect(result.exitCode).toBe(0)
    expect(changes()).toHaveLength(2)
    expect(result.durationMs).toBeGreaterThanOrEqual(2000)
  })

  it('never retries another 4XX', async () => {
    emulator.inject('POST /v2/change', { status: 422, body: '{"error":"bad labels"}' }, Infinity)
    const result = await action({ 'max-attempts': '4' })
    expect(changes()).toHaveLength(1)
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toContain('bad labels')
  })

  it('retries a reset connection', async () => {
    emulator.inject('POST /v2/change', { reset: true })
    const result = await action({ 'max-attempts': '2' })
    expect(result.exitCode).toBe(0)
    expect(changes()).toHaveLength(2)
    expect(emulator.changes.size).toBe(1)
  })

  it('bounds a hung server by timeout-seconds', async () => {
    emulator.inject('POST /v2/change', { hang: true }, Infinity)
    const result = await action({ 'timeout-seconds': '1', 'max-attempts': '2' })
    expect(changes()).toHaveLength(2)
    // Two attempts of 1 s, one backoff of at most BACKOFF_BASE_MS, and process start-up.
    expect(result.durationMs).toBeLessThan(4500)
    expect(result.exitCode).toBe(0)
    expect(result.outputs['error']).toMatch(/1 s|timeout-seconds/)
  })
})

describe('the key stays with the configured origin', () => {
  it('does not follow a redirect to another origin, and names the Location', async () => {
    const location = `${otherOrigin.url}v2/change`
    emulator.inject('POST /v2/change', { redirect: location, status: 307 }, Infinity)
    const result = await action({})
    expect(otherOrigin.requests).toEqual([])
    expect(changes()).toHaveLength(1)
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toContain(location)
  })

  it('redacts the key from a Location header', async () => {
    emulator.inject('POST /v2/change', {
      redirect: `https://elsewhere.invalid/?key=${emulator.apiKey}`,
      status: 302
    })
    const result = await action({})
    expect(result.exitCode).toBe(1)
    expect(result.stdout.replace(`::add-mask::${emulator.apiKey}`, '')).not.toContain(
      emulator.apiKey
    )
    expect(result.stdout).toContain('elsewhere.invalid')
  })

  it('refuses plain http:// before any connection', async () => {
    let connections = 0
    const plain: Server = createServer(socket => {
      connections++
      socket.destroy()
    })
    await new Promise<void>(resolve => plain.listen(0, '127.0.0.1', resolve))
    const port = (plain.address() as { port: number }).port
    try {
      const result = await action({ 'base-url': `http://127.0.0.1:${port}/` })
      expect(result.exitCode).toBe(1)
      expect(result.stdout).toMatch(/HTTPS/)
      expect(connections).toBe(0)
    } finally {
      plain.close()
    }
  })
})

describe('answers of the wrong shape', () => {
  it.each([
    ['an HTML gateway page', '<html><body><h1>Welcome to nginx</h1></body></html>'],
    ['an empty body', ''],
    ['a numeric id', '{"id":42}'],
    ['an array', '[]'],
    ['null', 'null']
  ])('reports %s as an error naming the call, never a crash', async (_what, body) => {
    emulator.inject('POST /v2/change', { status: 200, body })
    const result = await action({})
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/::error::POST \/v2\/change.*200/)
    expect(result.stdout).toContain('"id"')
    expect(result.stdout + result.stderr).not.toMatch(/TypeError|Cannot read properties|\n\s+at /)
  })
})

describe('proxies', () => {
  it('goes through HTTPS_PROXY with a CONNECT tunnel', async () => {
    const proxy = await startConnectProxy({
      route: () => ({ host: '127.0.0.1', port: emulator.port })
    })
    try {
      const result = await action(
        { 'base-url': `https://${TEST_SERVICE_HOST}:${emulator.port}/` },
        { env: { HTTPS_PROXY: proxy.url } }
      )
      expect(result.exitCode).toBe(0)
      expect(proxy.connects).toEqual([`${TEST_SERVICE_HOST}:${emulator.port}`])
      expect(emulator.changes.has(result.outputs['change-id'])).toBe(true)
    } finally {
      await proxy.close()
    }
  })

  it('bypasses the proxy for hosts in NO_PROXY', async () => {
    const proxy = await startConnectProxy({
      route: () => ({ host: '127.0.0.1', port: emulator.port })
    })
    try {
      const result = await action(
        { 'base-url': `https://${TEST_SERVICE_HOST}:${emulator.port}/`, 'max-attempts': '1' },
        { env: { HTTPS_PROXY: proxy.url, NO_PROXY: TEST_SERVICE_HOST } }
      )
      expect(proxy.connects).toEqual([])
      // Without the proxy the name does not resolve: a network error, so an outage warning.
      expect(result.exitCode).toBe(0)
      expect(result.outputs['error']).toContain(TEST_SERVICE_HOST)
      expect(emulator.requests).toEqual([])
    } finally {
      await proxy.close()
    }
  })
})

import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_SERVICE_HOST, trustTestCertificate } from '../../emulator/tls.ts'
import { githubRunner, requestIdToken } from '../../src/action/runner.ts'
import { startConnectProxy } from '../support/connect-proxy.ts'
import { jwtWith } from '../support/jwt.ts'
import { startLoopback, type Handler, type Loopback } from '../support/loopback.ts'
import { parseOutputFile } from '../support/run-action.ts'

let dir: string
const saved = { ...process.env }

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cta-runner-'))
  process.env['GITHUB_OUTPUT'] = join(dir, 'output')
  process.env['GITHUB_STEP_SUMMARY'] = join(dir, 'summary')
  writeFileSync(process.env['GITHUB_OUTPUT'], '')
  writeFileSync(process.env['GITHUB_STEP_SUMMARY'], '')
})
afterEach(() => {
  process.env = { ...saved }
  rmSync(dir, { recursive: true, force: true })
})

describe('githubRunner', () => {
  it('reads inputs the way the runner passes them', () => {
    process.env['INPUT_FAIL-ON-ERROR'] = '  true \n'
    expect(githubRunner.getInput('fail-on-error')).toBe('true')
    expect(githubRunner.getInput('missing')).toBe('')
  })

  it('writes outputs to the GITHUB_OUTPUT file, multi-line values included', () => {
    githubRunner.setOutput('change-id', 'c-1')
    githubRunner.setOutput('error', 'line one\nline two')
    const outputs = parseOutputFile(readFileSync(process.env['GITHUB_OUTPUT'] ?? '', 'utf8'))
    expect(outputs).toEqual({ 'change-id': 'c-1', error: 'line one\nline two' })
  })

  it('writes a large JSON array output line by line, and it still parses as one array', () => {
    const ids = Array.from({ length: 2500 }, (_, i) => `evt-${i}`)
    const lines = [0, 1000, 2000].map(
      (start, i, starts) =>
        `${i === 0 ? '[' : ''}${ids
          .slice(start, start + 1000)
          .map(id => JSON.stringify(id))
          .join(',')}${i === starts.length - 1 ? ']' : ','}`
    )
    githubRunner.setOutputLines('event-ids', lines)
    const text = readFileSync(process.env['GITHUB_OUTPUT'] ?? '', 'utf8')
    const outputs = parseOutputFile(text)
    expect(JSON.parse(outputs['event-ids'])).toEqual(ids)
    expect(outputs['event-ids'].split('\n')).toHaveLength(3)
  })

  it('appends markdown to the job summary file', async () => {
    await githubRunner.appendSummary('## One')
    await githubRunner.appendSummary('## Two')
    expect(readFileSync(process.env['GITHUB_STEP_SUMMARY'] ?? '', 'utf8')).toBe('## One\n## Two\n')
  })

  it('writes no summary, and does not fail, when the runner offers no summary file', async () => {
    delete process.env['GITHUB_STEP_SUMMARY']
    await expect(githubRunner.appendSummary('## One')).resolves.toBeUndefined()
  })

  it('hands a line-by-line output to core whole when there is no output file', () => {
    delete process.env['GITHUB_OUTPUT']
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true)
    try {
      githubRunner.setOutputLines('event-ids', ['["a",', '"b"]'])
      const printed = write.mock.calls.map(call => String(call[0])).join('')
      expect(printed).toContain('::set-output name=event-ids::["a",%0A"b"]')
    } finally {
      write.mockRestore()
    }
  })

  it('masks secrets and fails with an error command and exit code', () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true)
    try {
      githubRunner.setSecret('s3cret')
      githubRunner.setFailed('it broke')
      const printed = write.mock.calls.map(call => String(call[0])).join('')
      expect(printed).toContain('::add-mask::s3cret')
      expect(printed).toContain('::error::it broke')
      expect(process.exitCode).toBe(1)
    } finally {
      write.mockRestore()
      process.exitCode = 0
    }
  })
})

describe('githubRunner.getIDToken', () => {
  const TOKEN = jwtWith({ environment: 'production' })
  const REQUEST_TOKEN = 'request-token'
  const servers: Loopback[] = []
  const never = new AbortController().signal

  async function server(handle?: Handler): Promise<Loopback> {
    const started = await startLoopback(handle)
    servers.push(started)
    return started
  }
  /** The runner's token URL on this server (or host, port), asked for the audience `an-audience`. */
  function tokenAt(url: string, signal = never): Promise<string> {
    const endpoint = { url: `${url}token?api-version=2.0`, requestToken: REQUEST_TOKEN }
    return githubRunner.getIDToken(endpoint, 'an-audience', signal)
  }
  const answering =
    (status: number, body: string, headers: Record<string, string> = {}): Handler =>
    (_request, response) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers })
      response.end(body)
    }

  beforeAll(async () => {
    await trustTestCertificate()
  })
  beforeEach(() => {
    for (const name of [
      'HTTPS_PROXY',
      'https_proxy',
      'HTTP_PROXY',
      'http_proxy',
      'NO_PROXY',
      'no_proxy'
    ])
      delete process.env[name]
  })
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(started => started.close()))
  })

  it('asks as core does (a GET with the audience, the request token as a bearer) and gives the value', async () => {
    const seen: Array<{ method?: string; url?: string; authorization?: string }> = []
    const endpoint = await server((request, response) => {
      seen.push({
        method: request.method,
        url: request.url,
        authorization: request.headers.authorization
      })
      answering(200, JSON.stringify({ value: TOKEN }))(request, response, 0)
    })
    await expect(tokenAt(endpoint.url)).resolves.toBe(TOKEN)
    expect(seen).toEqual([
      {
        method: 'GET',
        url: '/token?api-version=2.0&audience=an-audience',
        authorization: `Bearer ${REQUEST_TOKEN}`
      }
    ])
  })

  it.each([
    ['a number', '{"value":12345}'],
    ['true', '{"value":true}'],
    ['an object', '{"value":{"a":1}}'],
    ['an array', '{"value":["a.b.c"]}'],
    ['an empty string', '{"value":""}'],
    ['null', '{"value":null}'],
    ['missing', '{"count":1}'],
    ['in an answer that is JSON null', 'null'],
    ['in an answer that is not JSON', '<html>token</html>']
  ])('gives no token when the value is %s', async (_, body) => {
    const endpoint = await server(answering(200, body))
    await expect(tokenAt(endpoint.url)).rejects.toThrow(
      'the token endpoint\'s answer has no token (a "value" that is a non-empty string)'
    )
  })

  it.each([302, 307, 308])(
    'sends the request token to no other origin: HTTP %i to another port is not followed',
    async status => {
      const elsewhere = await server(answering(200, JSON.stringify({ value: TOKEN })))
      const endpoint = await server(
        answering(status, '', { location: `${elsewhere.url}token?api-version=2.0` })
      )
      await expect(tokenAt(endpoint.url)).rejects.toThrow(
        `the token endpoint answered HTTP ${status}, a redirect, which is not followed`
      )
      expect(endpoint.requests).toBe(1)
      expect(elsewhere.connections).toBe(0)
    }
  )

  it('stops reading an answer over 64 KiB, and gives no token', async () => {
    /** Far more than loopback's socket buffers hold: the whole is sent only if it is all read. */
    const ANSWER_BYTES = 32 * 1024 * 1024
    const chunk = Buffer.alloc(64 * 1024, 'a')
    let sentWhole!: Promise<boolean>
    const endpoint = await server((_request, response) => {
      sentWhole = new Promise(done => response.on('close', () => done(response.writableFinished)))
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"value":"')
      let sent = 0
      const more = (): void => {
        while (sent < ANSWER_BYTES && !response.destroyed) {
          sent += chunk.byteLength
          if (!response.write(chunk)) return void response.once('drain', more)
        }
        response.end('"}')
      }
      more()
    })
    await expect(tokenAt(endpoint.url)).rejects.toThrow(
      "the token endpoint's answer is over 64 KiB"
    )
    expect(await sentWhole).toBe(false)
  })

  it('closes its connection to a token endpoint that never answers, once its signal aborts', async () => {
    const stop = new AbortController()
    const endpoint = await server(() => stop.abort())
    await expect(tokenAt(endpoint.url, stop.signal)).rejects.toThrow()
    await endpoint.allClosed()
  })

  it('gives up on a token endpoint that never answers by its own deadline, whatever its signal', async () => {
    const endpoint = await server(() => undefined)
    const at = { url: `${endpoint.url}token?api-version=2.0`, requestToken: REQUEST_TOKEN }
    await expect(requestIdToken(at, 'an-audience', never, 200)).rejects.toThrow(
      'the token endpoint gave no complete answer within 0.2 s'
    )
    expect(endpoint.requests).toBe(1)
    await endpoint.allClosed()
  })

  it('looks its host up as the service’s requests do, where every name under localhost is loopback', async () => {
    // This machine's own resolver (getaddrinfo) knows localhost alone.
    const endpoint = createServer((_request, response) =>
      response.end(JSON.stringify({ value: TOKEN }))
    )
    await new Promise<void>(done => endpoint.listen(0, '127.0.0.1', done))
    try {
      const { port } = endpoint.address() as AddressInfo
      await expect(tokenAt(`http://token.localhost:${port}/`)).resolves.toBe(TOKEN)
    } finally {
      endpoint.closeAllConnections()
      endpoint.close()
    }
  })

  describe('through a proxy', () => {
    it('tunnels through HTTPS_PROXY, as core would, to a host only the proxy can reach', async () => {
      const proxy = await startConnectProxy({
        route: (_host, port) => ({ host: '127.0.0.1', port })
      })
      try {
        process.env['HTTPS_PROXY'] = proxy.url
        const endpoint = await server(answering(200, JSON.stringify({ value: TOKEN })))
        await expect(tokenAt(`https://${TEST_SERVICE_HOST}:${endpoint.port}/`)).resolves.toBe(TOKEN)
        expect(proxy.connects).toEqual([`${TEST_SERVICE_HOST}:${endpoint.port}`])
      } finally {
        await proxy.close()
      }
    })

    it('says the proxy refused the tunnel, with its answer', async () => {
      const refusing = await startConnectProxy({ refuseWith: 407 })
      try {
        process.env['HTTPS_PROXY'] = refusing.url
        await expect(tokenAt(`https://${TEST_SERVICE_HOST}:1/`)).rejects.toThrow(
          `the token request failed: the proxy answered HTTP 407 to CONNECT ${TEST_SERVICE_HOST}:1`
        )
      } finally {
        await refusing.close()
      }
    })

    it('ends the tunnel it waits for once its signal aborts, whatever the proxy does', async () => {
      const silent = await server()
      process.env['HTTPS_PROXY'] = silent.url
      const stop = new AbortController()
      const token = tokenAt(`https://${TEST_SERVICE_HOST}:1/`, stop.signal)
      while (silent.connections === 0) await new Promise(done => setTimeout(done, 5))
      stop.abort()
      await expect(token).rejects.toThrow()
      await silent.allClosed()
    })
  })
})

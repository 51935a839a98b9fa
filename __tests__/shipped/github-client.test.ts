/**
 * The lookup's GitHub client against real loopback HTTPS servers: the time budget (a hung API, a
 * hung later page, a proxy that never answers CONNECT), the call limit, resets, answers too large,
 * redirects and links that leave the API (the token never follows), requests refused before they
 * are sent, proxies by the toolkit's rules, a process that exits as soon as the lookup is done, and
 * a toolkit that is loaded only when a call is made.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { writeFileSync, mkdtempSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer, type Server } from 'node:https'
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../../src/shipped/api-failure.ts'
import { MAX_GITHUB_RESPONSE_BYTES } from '../../src/shipped/bounded-fetch.ts'
import { GitHubClient, MAX_URL_CHARS } from '../../src/shipped/github-client.ts'
import { lookUpShipped, type LookupOptions } from '../../src/shipped/lookup.ts'
import {
  TEST_SERVICE_HOST,
  trustTestCertificate,
  type TestCertificate
} from '../../emulator/tls.ts'
import { startConnectProxy } from '../support/connect-proxy.ts'
import { comparePage, history, REPOSITORY, sha, TOKEN } from './github-fixtures.ts'

const PROXY_ENV = ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'] as const
const VERSION = sha('version')
const PREVIOUS = sha('previous')
const COMPARE_PATH = `/api/v3/repos/${REPOSITORY}/compare/${PREVIOUS}...${VERSION}`

type Handler = (req: IncomingMessage, res: ServerResponse) => void

interface TestServer {
  origin: string
  port: number
  requests: { url: string; authorization?: string; apiVersion?: string | string[] }[]
  /** Sockets still open. */
  openSockets: Set<Socket>
  handle: Handler
  close(): Promise<void>
}

let certificate: TestCertificate
const servers: TestServer[] = []

async function startServer(handle: Handler): Promise<TestServer> {
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert })
  const state: TestServer = {
    origin: '',
    port: 0,
    requests: [],
    openSockets: new Set(),
    handle,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections()
        for (const socket of state.openSockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  server.on('connection', (socket: Socket) => {
    state.openSockets.add(socket)
    socket.on('close', () => state.openSockets.delete(socket))
  })
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    state.requests.push({
      url: req.url ?? '',
      authorization: req.headers.authorization,
      apiVersion: req.headers['x-github-api-version']
    })
    state.handle(req, res)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  state.port = (server.address() as AddressInfo).port
  state.origin = `https://127.0.0.1:${state.port}`
  servers.push(state)
  return state
}

/** Resolves once the condition holds, or rejects after `ms`. */
async function eventually(condition: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

function options(apiUrl: string, overrides: Partial<LookupOptions> = {}): LookupOptions {
  return {
    token: TOKEN,
    apiUrl,
    serverUrl: 'https://ghes.example.com',
    repository: REPOSITORY,
    eventName: 'workflow_dispatch',
    payload: {},
    advice: { tokenInput: 'github-token' },
    version: VERSION,
    previousVersion: PREVIOUS,
    budgetMs: 5000,
    ...overrides
  }
}

const hang: Handler = () => {}

beforeAll(async () => {
  certificate = await trustTestCertificate()
})
let savedEnv: Partial<Record<(typeof PROXY_ENV)[number], string>>
beforeEach(() => {
  savedEnv = {}
  for (const name of PROXY_ENV) {
    savedEnv[name] = process.env[name]
    delete process.env[name]
  }
})
afterEach(async () => {
  for (const name of PROXY_ENV) {
    if (savedEnv[name] === undefined) delete process.env[name]
    else process.env[name] = savedEnv[name]
  }
  await Promise.all(servers.splice(0).map(server => server.close()))
})
afterAll(async () => {
  await Promise.all(servers.splice(0).map(server => server.close()))
})

describe('the time budget', () => {
  it('returns at the budget from a hung API, with one warning, and closes its socket', async () => {
    const api = await startServer(hang)
    const started = Date.now()
    const { shipped, warning } = await lookUpShipped(
      options(`${api.origin}/api/v3`, { budgetMs: 300 })
    )
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(290)
    expect(elapsed).toBeLessThan(1000)
    expect(warning).toContain(
      `the GitHub API did not answer GET /repos/${REPOSITORY}/compare/${PREVIOUS}...${VERSION} within the lookup's time budget of 0.3 s`
    )
    // Whatever was found before the budget ran out is kept.
    expect(shipped).toMatchObject({ previousSha: PREVIOUS, source: 'input', apiCalls: 1 })
    await eventually(() => api.openSockets.size === 0, 1000)
  })

  it('returns at the budget when a proxy never answers CONNECT, and closes the proxy socket', async () => {
    const proxySockets = new Set<Socket>()
    const silentProxy = createTcpServer(socket => {
      proxySockets.add(socket)
      socket.on('close', () => proxySockets.delete(socket))
      socket.on('error', () => {})
      // Reads (and ignores) the CONNECT, so that it sees the client's end.
      socket.resume()
    })
    await new Promise<void>(resolve => silentProxy.listen(0, '127.0.0.1', resolve))
    try {
      process.env.HTTPS_PROXY = `http://127.0.0.1:${(silentProxy.address() as AddressInfo).port}`
      const started = Date.now()
      const { warning } = await lookUpShipped(
        options(`https://${TEST_SERVICE_HOST}:4443/api/v3`, { budgetMs: 300 })
      )
      expect(Date.now() - started).toBeLessThan(1000)
      expect(warning).toContain("within the lookup's time budget of 0.3 s")
      await eventually(() => proxySockets.size === 0, 1000)
    } finally {
      for (const socket of proxySockets) socket.destroy()
      await new Promise<void>(resolve => silentProxy.close(() => resolve()))
    }
  })

  it('starts no call once the budget has run out', async () => {
    const api = await startServer((_req, res) => res.end('[]'))
    const client = new GitHubClient({ apiUrl: `${api.origin}/api/v3`, token: TOKEN, budgetMs: 50 })
    try {
      await eventually(() => client.timedOut, 1000)
      await expect(
        client.call(octokit => octokit.rest.repos.listReleases({ owner: 'acme', repo: 'shop' }))
      ).rejects.toMatchObject({
        failure: { type: 'budget', call: 'GET /repos/acme/shop/releases', budgetMs: 50 }
      })
      expect(api.requests).toEqual([])
      expect(client.calls).toBe(0)
    } finally {
      client.close()
    }
  })

  it('lets the process exit as soon as the lookup is done, even after a hung API', async () => {
    const api = await startServer(hang)
    const dir = mkdtempSync(join(tmpdir(), 'cta-shipped-'))
    const script = join(dir, 'lookup-child.ts')
    writeFileSync(
      script,
      [
        `import { lookUpShipped } from ${JSON.stringify(join(process.cwd(), 'src/shipped/lookup.ts'))}`,
        `const result = await lookUpShipped(${JSON.stringify(options(`${api.origin}/api/v3`, { budgetMs: 300 }))})`,
        `console.log(JSON.stringify({ warned: Boolean(result.warning), at: Date.now() }))`
      ].join('\n')
    )
    const child = spawn(process.execPath, [script], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? '', NODE_EXTRA_CA_CERTS: certificate.certPath },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const exitedAt = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new Error(`the child did not exit: ${stdout} ${stderr}`))
      }, 10_000)
      child.on('exit', code => {
        clearTimeout(timer)
        if (code === 0) resolve(Date.now())
        else reject(new Error(`exit ${code}: ${stderr}`))
      })
    })
    const printed = JSON.parse(stdout) as { warned: boolean; at: number }
    expect(printed.warned).toBe(true)
    // Nothing (socket, timer) holds the process once the lookup has returned.
    expect(exitedAt - printed.at).toBeLessThan(500)
  })
})

describe('the call limit', () => {
  it('does not make a call past the limit', async () => {
    const api = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('[]')
    })
    const client = new GitHubClient({ apiUrl: `${api.origin}/api/v3`, token: TOKEN, maxCalls: 2 })
    try {
      const list = () =>
        client.call(octokit => octokit.rest.repos.listReleases({ owner: 'acme', repo: 'shop' }))
      await list()
      await list()
      await expect(list()).rejects.toMatchObject({
        failure: { type: 'call-limit', call: 'GET /repos/acme/shop/releases' }
      })
      expect(api.requests).toHaveLength(2)
      expect(client.calls).toBe(2)
    } finally {
      client.close()
    }
  })
})

describe('the time budget on a later page', () => {
  it('keeps what the first compare page said when a later page hangs past the budget', async () => {
    let hungSocketClosed = false
    const api = await startServer((req, res) => {
      if (/[?&]page=/.test(req.url ?? '')) {
        req.socket.once('close', () => (hungSocketClosed = true))
        return
      }
      const page = comparePage({
        base: PREVIOUS,
        head: VERSION,
        commits: history(600),
        files: ['a.ts', 'b.ts'],
        pageUrl: `${api.origin}${COMPARE_PATH}?per_page=250`
      })
      res.writeHead(200, page.headers)
      res.end(JSON.stringify(page.body))
    })
    const started = Date.now()
    const { shipped, warning } = await lookUpShipped(
      options(`${api.origin}/api/v3`, { budgetMs: 400 })
    )
    expect(Date.now() - started).toBeLessThan(1500)
    expect(shipped).toMatchObject({
      commitCount: 600,
      changedFiles: [{ path: 'a.ts' }, { path: 'b.ts' }],
      changedFilesComplete: true,
      apiCalls: 2
    })
    expect(shipped.commits).toHaveLength(50)
    expect(warning).toContain("within the lookup's time budget of 0.4 s")
    expect(warning).toMatch(/recorded with what was found\.$/)
    // The hung call ends with the budget; an idle keep-alive connection may stay until it times out.
    await eventually(() => hungSocketClosed, 1000)
  })
})

describe('answers too large', () => {
  const CHUNK = Buffer.alloc(64 * 1024, 'x')

  it('stops reading an answer streamed past the bound, and closes the connection', async () => {
    let written = 0
    const api = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('["')
      const pump = (): void => {
        while (written <= 2 * MAX_GITHUB_RESPONSE_BYTES) {
          written += CHUNK.length
          if (!res.write(CHUNK)) {
            res.once('drain', pump)
            return
          }
        }
        res.end('"]')
      }
      res.on('error', () => {})
      pump()
    })
    const { shipped, warning } = await lookUpShipped(options(`${api.origin}/api/v3`))
    expect(warning).toContain(
      `GET /repos/${REPOSITORY}/compare/${PREVIOUS}...${VERSION} answered more than 10 MiB, which is refused`
    )
    expect(shipped.commitCount).toBeUndefined()
    expect(written).toBeLessThan(2 * MAX_GITHUB_RESPONSE_BYTES)
    await eventually(() => api.openSockets.size === 0, 2000)
  })

  it('refuses an answer whose declared length is past the bound, before reading it', async () => {
    const api = await startServer((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(MAX_GITHUB_RESPONSE_BYTES + 1)
      })
      res.write('[')
    })
    const { warning } = await lookUpShipped(options(`${api.origin}/api/v3`))
    expect(warning).toContain('answered more than 10 MiB, which is refused')
  })
})

describe('requests refused before they are sent', () => {
  it('does not send a URL longer than the bound, and says it was refused', async () => {
    const api = await startServer((_req, res) => res.end('{}'))
    const { warning } = await lookUpShipped(
      options(`${api.origin}/api/v3`, { previousVersion: `v${'1'.repeat(MAX_URL_CHARS)}` })
    )
    expect(api.requests).toEqual([])
    expect(warning).toContain(
      `was refused before it was sent: its URL is longer than ${MAX_URL_CHARS} characters`
    )
    expect(warning).not.toContain('could not be reached')
  })

  it.each(['..%2f..%2fother', '..%2F..%2Fother', '%2e%2e/%2e%2e/other', 'x/..%5c..%5cother'])(
    'never sends the token to a link below the root only before decoding (%s)',
    async climb => {
      const api = await startServer((_req, res) => res.end('{}'))
      const client = new GitHubClient({ apiUrl: `${api.origin}/api/v3/`, token: TOKEN })
      try {
        const link = new URL(`${api.origin}/api/v3/${climb}?page=3`)
        expect(client.isBelowRoot(link)).toBe(false)
        await expect(client.getUrl(link)).rejects.toBeInstanceOf(ApiError)
        expect(api.requests).toEqual([])
        expect(client.calls).toBe(0)
      } finally {
        client.close()
      }
    }
  )
})

describe('faults on the wire', () => {
  it('a reset becomes one warning naming the call and the code', async () => {
    const api = await startServer(req => req.socket.destroy())
    const { warning } = await lookUpShipped(options(`${api.origin}/api/v3`))
    expect(warning).toContain(`GET /repos/${REPOSITORY}/compare/`)
    expect(warning).toContain('failed with UND_ERR_SOCKET')
    expect(warning?.split('\n')).toHaveLength(1)
  })
})

describe('the token goes to the API only', () => {
  it('sends it in the Authorization header with the API version, and never follows a redirect elsewhere', async () => {
    const elsewhere = await startServer((_req, res) => res.end('{}'))
    const api = await startServer((_req, res) => {
      res.writeHead(302, { Location: `${elsewhere.origin}${COMPARE_PATH}` })
      res.end()
    })
    const { warning } = await lookUpShipped(options(`${api.origin}/api/v3`))
    expect(api.requests).toEqual([
      {
        url: `${COMPARE_PATH}?per_page=250`,
        authorization: `token ${TOKEN}`,
        apiVersion: '2022-11-28'
      }
    ])
    expect(elsewhere.requests).toEqual([])
    expect(warning).toContain('answered a redirect (HTTP 302), which is never followed')
  })

  it('does not follow a Link to another origin, and keeps the first page', async () => {
    const elsewhere = await startServer((_req, res) => res.end('{}'))
    const api = await startServer((_req, res) => {
      const page = comparePage({
        base: PREVIOUS,
        head: VERSION,
        commits: history(600),
        pageUrl: `${elsewhere.origin}${COMPARE_PATH}?per_page=250`
      })
      res.writeHead(200, page.headers)
      res.end(JSON.stringify(page.body))
    })
    const { shipped, warning } = await lookUpShipped(options(`${api.origin}/api/v3`))
    expect(warning).toBeUndefined()
    expect(shipped.commitCount).toBe(600)
    expect(shipped.apiCalls).toBe(1)
    expect(elsewhere.requests).toEqual([])
  })
})

describe('the toolkit is loaded only for a call', () => {
  it('does not load @actions/github for lookups that make no call, and loads it for one that does', async () => {
    const api = await startServer((_req, res) => res.end('{}'))
    const dir = mkdtempSync(join(tmpdir(), 'cta-shipped-'))
    const script = join(dir, 'loading-child.ts')
    const lookupPath = JSON.stringify(join(process.cwd(), 'src/shipped/lookup.ts'))
    writeFileSync(
      script,
      [
        `import { registerHooks } from 'node:module'`,
        `const loaded: string[] = []`,
        `registerHooks({ resolve(specifier, context, next) {`,
        `  if (specifier === '@actions/github') loaded.push(specifier)`,
        `  return next(specifier, context)`,
        `} })`,
        `const { lookUpShipped } = await import(${lookupPath})`,
        `const options = ${JSON.stringify(options(`${api.origin}/api/v3`, { budgetMs: 2000 }))}`,
        `await lookUpShipped({ ...options, token: '' })`,
        `await lookUpShipped({ ...options, previousVersion: options.version })`,
        `const withoutCalls = loaded.length`,
        `await lookUpShipped(options)`,
        `console.log(JSON.stringify({ withoutCalls, withCalls: loaded.length }))`
      ].join('\n')
    )
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [script], {
        cwd: process.cwd(),
        env: { PATH: process.env.PATH ?? '', NODE_EXTRA_CA_CERTS: certificate.certPath },
        stdio: ['ignore', 'pipe', 'pipe']
      })
      let out = ''
      let err = ''
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
      child.on('exit', code => (code === 0 ? resolve(out) : reject(new Error(err))))
    })
    expect(JSON.parse(stdout)).toEqual({ withoutCalls: 0, withCalls: 1 })
    expect(api.requests).toHaveLength(1)
  }, 15_000)
})

describe('proxies, by the same rules as the service calls', () => {
  const compareAnswer: Handler = (_req, res) => {
    const page = comparePage({ base: PREVIOUS, head: VERSION, commits: history(3) })
    res.writeHead(200, page.headers)
    res.end(JSON.stringify(page.body))
  }

  it('tunnels through HTTPS_PROXY with its credentials, which never show', async () => {
    const api = await startServer(compareAnswer)
    const proxy = await startConnectProxy({ route: () => ({ host: '127.0.0.1', port: api.port }) })
    try {
      process.env.HTTPS_PROXY = proxy.url.replace('http://', 'http://user:pr0xy-pass@')
      const { shipped, warning } = await lookUpShipped(
        options(`https://${TEST_SERVICE_HOST}:${api.port}/api/v3`)
      )
      expect(warning).toBeUndefined()
      expect(shipped.commitCount).toBe(3)
      expect(proxy.connects).toEqual([`${TEST_SERVICE_HOST}:${api.port}`])
      expect(proxy.proxyAuthorizations).toEqual([
        `Basic ${Buffer.from('user:pr0xy-pass').toString('base64')}`
      ])
    } finally {
      await proxy.close()
    }
  })

  it('names the proxy by host and port only when the call through it fails', async () => {
    const proxy = await startConnectProxy({ route: () => ({ host: '127.0.0.1', port: 9 }) })
    try {
      process.env.https_proxy = proxy.url.replace('http://', 'http://user:pr0xy-pass@')
      const { warning } = await lookUpShipped(options(`https://${TEST_SERVICE_HOST}:4443/api/v3`))
      expect(warning).toContain(`the proxy 127.0.0.1:${proxy.port} answered HTTP 502 to the tunnel`)
      expect(warning).not.toContain('pr0xy-pass')
    } finally {
      await proxy.close()
    }
  })

  it('goes direct for a host in NO_PROXY, and for loopback', async () => {
    const api = await startServer(compareAnswer)
    const proxy = await startConnectProxy({ route: () => ({ host: '127.0.0.1', port: api.port }) })
    try {
      process.env.HTTPS_PROXY = proxy.url
      process.env.NO_PROXY = TEST_SERVICE_HOST
      // Direct, the test host does not resolve: the failure proves the proxy was not used.
      const bypassed = await lookUpShipped(
        options(`https://${TEST_SERVICE_HOST}:${api.port}/api/v3`)
      )
      expect(bypassed.warning).toContain('failed with ENOTFOUND')
      delete process.env.NO_PROXY
      const loopback = await lookUpShipped(options(`${api.origin}/api/v3`))
      expect(loopback.shipped.commitCount).toBe(3)
      expect(proxy.connects).toEqual([])
    } finally {
      await proxy.close()
    }
  })
})

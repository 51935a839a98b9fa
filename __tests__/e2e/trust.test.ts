/**
 * The bundled action as a real process against hostile services, proxies and inputs on loopback:
 * nothing from outside becomes a workflow command, no socket outlives its deadline,
 * memory stays bounded, secrets never show, failures are classified by who must act, and a
 * cancelled run leaves a trace.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import type { ChildProcess } from 'node:child_process'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_SERVICE_HOST, testCertificate } from '../../emulator/tls.ts'
import {
  actionAgainst,
  runAction,
  TEST_GITHUB_TOKEN,
  type ActionRun
} from '../support/run-action.ts'
import {
  replyJson,
  startBadProxy,
  startHostileServer,
  type HostileServer
} from '../support/hostile-server.ts'

const API_KEY = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'

let certPath: string
let workspace: string
const servers: Array<{ close(): Promise<void> }> = []

beforeAll(async () => {
  certPath = (await testCertificate()).certPath
  workspace = mkdtempSync(join(tmpdir(), 'cta-trust-'))
})
afterEach(async () => {
  await Promise.all(servers.splice(0).map(server => server.close()))
})
afterAll(() => rmSync(workspace, { recursive: true, force: true }))

async function hostile(answer: Parameters<typeof startHostileServer>[0]): Promise<HostileServer> {
  const server = await startHostileServer(answer)
  servers.push(server)
  return server
}

/** Lines as the runner reads them: it splits on \n and on a bare \r. */
function runnerLines(text: string): string[] {
  return text.split(/\r\n|\n|\r/)
}

/**
 * A workflow command's text as the runner shows it: the toolkit escapes %, CR and LN in the data
 * (and : and , in properties), and the runner turns them back.
 */
function asShown(line: string): string {
  return line
    .replace(/%0D/gi, '\r')
    .replace(/%0A/gi, '\n')
    .replace(/%3A/gi, ':')
    .replace(/%2C/gi, ',')
    .replace(/%25/g, '%')
}

/** Everything a user or the runner could see of a run, but the one line that masks the key. */
function everythingSeen(run: ActionRun, key = API_KEY): string {
  const stdout = runnerLines(run.stdout)
    .filter(line => line !== `::add-mask::${key}` && line !== `::add-mask::${TEST_GITHUB_TOKEN}`)
    .map(line => (line.startsWith('::') ? asShown(line) : line))
    .join('\n')
  return [stdout, run.stderr, run.summary, ...Object.values(run.outputs)].join('\n')
}

/** The workflow commands this action may print itself. */
const OWN_COMMAND = /^::(add-mask|debug|notice|warning|error)( [^:]*)?::/

describe('outside text never becomes a workflow command', () => {
  const SIGNAL_ID =
    'sig1\n::warning::pwned\n::set-output name=change-id::evil\n::add-mask::octocat\n::stop-commands::tok'

  it('refuses a multi-line heartbeat signal id as a protocol error naming the call', async () => {
    const server = await hostile((_request, response) =>
      replyJson(response, 200, { id: SIGNAL_ID })
    )
    const run = await actionAgainst(
      { apiKey: API_KEY, url: server.url },
      certPath
    )({
      command: 'heartbeat',
      'heartbeat-id': 'nightly'
    })

    const lines = runnerLines(run.stdout)
    for (const line of lines.filter(line => line.startsWith('::'))) {
      expect(line).toMatch(OWN_COMMAND)
      // The action masks its own secrets only: the key and the GitHub token.
      if (line.startsWith('::add-mask::')) {
        expect([API_KEY, TEST_GITHUB_TOKEN]).toContain(line.slice('::add-mask::'.length))
      }
    }
    for (const injected of ['::warning::pwned', '::add-mask::octocat', '::stop-commands::']) {
      expect(lines.some(line => line.startsWith(injected))).toBe(false)
    }
    expect(run.exitCode).toBe(1)
    expect(run.stdout).toMatch(/^::error::.*POST \/v1\/heartbeat\/nightly/m)
    expect(run.outputs['heartbeat-signal-id']).toBeUndefined()
  })

  it('breaks the runner’s legacy ##[ syntax in a signal id and in a dry run’s commit message', async () => {
    const server = await hostile((_request, response) =>
      replyJson(response, 200, { id: 'sig-1 ##[set-output name=change-id;]pwned' })
    )
    const against = actionAgainst({ apiKey: API_KEY, url: server.url }, certPath)
    const heartbeat = await against({ command: 'heartbeat', 'heartbeat-id': 'nightly' })
    const after = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'
    const dryRun = await against(
      { 'dry-run': 'true', 'include-commits': 'true', 'github-token': '' },
      {
        payload: {
          ref: 'refs/heads/main',
          before: '1'.repeat(40),
          after,
          commits: [{ id: after, message: 'Fix typo ##[set-output name=error;]x', added: ['a'] }]
        }
      }
    )
    expect(heartbeat.exitCode).toBe(0)
    expect(heartbeat.stdout).toContain('received as signal sig-1 #\\u0023[set-output')
    expect(dryRun.exitCode).toBe(0)
    expect(dryRun.stdout).toContain('Fix typo #\\u0023[set-output')
    for (const run of [heartbeat, dryRun]) {
      expect(runnerLines(run.stdout).filter(line => line.includes('##['))).toEqual([])
      expect(run.outputs['error']).toBeUndefined()
    }
  })

  it('never prints terminal escapes or bidi controls from a service error', async () => {
    const server = await hostile((_request, response) =>
      replyJson(response, 400, { error: '\u001b[31mred alert\u001b[0m \u202eslaer si siht' })
    )
    const run = await actionAgainst({ apiKey: API_KEY, url: server.url }, certPath)({})
    expect(run.exitCode).toBe(1)
    expect(run.stdout).toMatch(/^::error::POST \/v2\/change/m)
    for (const text of [run.stdout, run.outputs['error'] ?? '']) {
      expect(text).not.toContain('\u001b')
      expect(text).not.toContain('\u202e')
    }
  })
})

describe('no socket outlives its attempt', () => {
  it('exits within 2 s of its warning when a proxy never answers CONNECT', async () => {
    const proxy = await startBadProxy()
    servers.push(proxy)
    const run = await runAction({
      inputs: {
        'api-key': API_KEY,
        'base-url': `https://${TEST_SERVICE_HOST}/`,
        'timeout-seconds': '1',
        'max-attempts': '2'
      },
      caCertPath: certPath,
      env: { HTTPS_PROXY: proxy.url },
      // Two attempts of 1 s, a backoff and start-up take about 4 s; a process held open is cut.
      timeoutMs: 10_000
    })

    expect(proxy.connections).toBeGreaterThanOrEqual(1)
    // The last warning: the one that reports the outage after the final attempt.
    const warning = run.stdoutChunks.findLast(chunk => /^::warning::/m.test(chunk.text))
    expect(warning).toBeDefined()
    expect(run.signal).toBeNull()
    expect(run.exitAtMs - (warning?.atMs ?? 0)).toBeLessThan(2000)
  })
})

describe('bounded memory for any events file', () => {
  /** Loose enough for CI, far below what reading a 3 GB line costs (8 GB was seen). */
  const MAX_PEAK_RSS_BYTES = 200 * 1024 * 1024
  const HUGE_BYTES = '3G'

  it.each([
    ['a 3 GB file in one line', '', 1],
    ['one valid event, then a 3 GB line', '{"name":"deploy","data":{"ok":true}}\n', 2]
  ])('refuses %s quickly, naming the line, with bounded memory', async (_what, head, line) => {
    const path = join(workspace, `huge-${line}.ndjson`)
    writeFileSync(path, head)
    // Sparse: the file reads as 3 GB of NUL bytes and costs no disk.
    execFileSync('truncate', ['-s', HUGE_BYTES, path])
    try {
      const server = await hostile((_request, response) => replyJson(response, 500, {}))
      const run = await runAction({
        inputs: {
          'api-key': API_KEY,
          'base-url': server.url,
          command: 'events',
          'events-file': path
        },
        caCertPath: certPath,
        env: { GITHUB_WORKSPACE: workspace },
        measurePeakRss: true,
        timeoutMs: 20_000
      })
      expect(run.signal).toBeNull()
      expect(run.exitCode).toBe(1)
      expect(run.durationMs).toBeLessThan(10_000)
      expect(run.stdout).toMatch(new RegExp(`^::error::.*events-file.*line ${line}\\b`, 'm'))
      expect(server.requests).toEqual([])
      expect(run.peakRssBytes).toBeLessThan(MAX_PEAK_RSS_BYTES)
    } finally {
      rmSync(path, { force: true })
    }
  })
})

describe('credentials in base-url are never quoted', () => {
  it.each([
    'http://user:pass@host/',
    'ftp://user:pass@host/',
    'https://user:pass@exa mple.com/',
    'https://host/?token=secret',
    'http://host/?token=secret#secret'
  ])('%s fails and shows no credential', async baseUrl => {
    const run = await runAction({
      inputs: { 'api-key': API_KEY, 'base-url': baseUrl, 'max-attempts': '1' },
      caCertPath: certPath
    })
    expect(run.exitCode).toBe(1)
    expect(run.outputs['error']).toMatch(/base-url|host/)
    const seen = everythingSeen(run)
    expect(seen).not.toContain('user:pass')
    expect(seen).not.toMatch(/\bpass\b|secret/)
  })
})

describe('a response over the size cap is an error, never truncated data', () => {
  it('fails event-results whose 2XX answer is over 10 MiB, naming the call and the cap', async () => {
    const server = await hostile((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify([{ id: 'evt-1', result: 'x'.repeat(11 * 1024 * 1024) }]))
    })
    const run = await actionAgainst(
      { apiKey: API_KEY, url: server.url },
      certPath
    )({
      command: 'event-results',
      'event-ids': '["evt-1"]',
      'fail-on-error': 'true'
    })
    expect(run.exitCode).toBe(1)
    expect(run.outputs['error']).toMatch(/GET \/v2\/event_results/)
    expect(run.outputs['error']).toMatch(/10 MiB|10,485,760|10485760/)
    expect(run.outputs['event-results']).toBeUndefined()
  })
})

describe('failures are classified by who must act', () => {
  it.each([407, 403] as const)(
    'a proxy answering %i to CONNECT fails under auto, names the proxy, and is not retried',
    async status => {
      const proxy = await startBadProxy(status)
      servers.push(proxy)
      const run = await runAction({
        inputs: {
          'api-key': API_KEY,
          'base-url': `https://${TEST_SERVICE_HOST}/`,
          'max-attempts': '3'
        },
        caCertPath: certPath,
        env: { HTTPS_PROXY: `http://proxyuser:proxypw@127.0.0.1:${proxy.port}` }
      })
      expect(run.exitCode).toBe(1)
      expect(run.outputs['error']).toContain(`127.0.0.1:${proxy.port}`)
      expect(run.outputs['error']).toContain(String(status))
      expect(proxy.requestLines).toHaveLength(1)
      expect(everythingSeen(run)).not.toContain('proxypw')
    }
  )

  it('a host that does not resolve fails under auto, names the host, and is not retried', async () => {
    const run = await runAction({
      inputs: {
        'api-key': API_KEY,
        'base-url': 'https://does-not-exist.invalid/',
        'max-attempts': '3'
      },
      caCertPath: certPath
    })
    expect(run.exitCode).toBe(1)
    expect(run.stdout).toMatch(/^::error::.*does-not-exist\.invalid/m)
    expect(run.outputs['error']).not.toMatch(/\b[23] attempts\b/)
    expect(run.stdout).not.toMatch(/retry/i)
  })

  it('retries a 503 with a 20 KB header, and ends as an outage warning under auto', async () => {
    const server = await hostile((_request, response) => {
      response.writeHead(503, { 'X-Filler': 'f'.repeat(20 * 1024), 'Content-Type': 'text/plain' })
      response.end('maintenance')
    })
    const run = await actionAgainst(
      { apiKey: API_KEY, url: server.url },
      certPath
    )({
      'max-attempts': '2'
    })
    expect(server.requests).toHaveLength(2)
    expect(run.exitCode).toBe(0)
    expect(run.stdout).toMatch(/^::warning::.*POST \/v2\/change/m)
    expect(run.stdout).not.toMatch(/HTTPS server/)
  })
})

describe('deep JSON is an input error naming the input', () => {
  const DEPTH = 20_000
  const deep = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`

  it.each([
    ['custom-metadata', { 'custom-metadata': deep }],
    ['events', { command: 'events', events: `{"name":"e","data":${deep}}` }]
  ])('a 20,000-deep %s', async (input, inputs) => {
    const server = await hostile((_request, response) => replyJson(response, 500, {}))
    const run = await actionAgainst({ apiKey: API_KEY, url: server.url }, certPath)(inputs)
    expect(run.exitCode).toBe(1)
    expect(run.outputs['error']).toContain(input)
    expect(run.stdout + run.stderr).not.toMatch(/Maximum call stack/)
    expect(server.requests).toEqual([])
  })
})

describe('a cancelled run leaves a trace', () => {
  /** The action must be gone this soon after the signal. */
  const MAX_EXIT_AFTER_SIGNAL_MS = 1000

  it.each([
    ['SIGTERM', 'a retry wait', true],
    ['SIGINT', 'a hung attempt', false]
  ] as const)('%s during %s', async (signal, _during, answer) => {
    let child: ChildProcess | undefined
    let spawnedAt = 0
    let signalledAt = 0
    const server = await hostile((_request, response) => {
      // A 503 with a long Retry-After puts the action in a retry wait; no answer hangs it.
      if (answer) {
        response.writeHead(503, { 'Retry-After': '30', 'Content-Type': 'text/plain' })
        response.end('maintenance')
      }
      setTimeout(() => {
        signalledAt = performance.now() - spawnedAt
        child?.kill(signal)
      }, 300)
    })
    const run = await runAction({
      inputs: { 'api-key': API_KEY, 'base-url': server.url, 'timeout-seconds': '30' },
      caCertPath: certPath,
      timeoutMs: 15_000,
      onSpawn: spawned => {
        child = spawned
        spawnedAt = performance.now()
      }
    })
    expect(server.requests).toHaveLength(1)
    expect(signalledAt).toBeGreaterThan(0)
    expect(run.exitAtMs - signalledAt).toBeLessThan(MAX_EXIT_AFTER_SIGNAL_MS)
    expect(run.outputs['error']).toMatch(/cancel/i)
    expect(run.stdout).toMatch(/^::warning::.*cancel/im)
    expect(run.summary).toMatch(/cancel/i)
    expect(run.summary).toMatch(/recorded/i)
  })
})

describe('service patterns that backtrack', () => {
  /** Paths that make `*a*a*…*b` backtrack: long runs of `a` with no `b`. */
  const SLOW_PATHS = Array.from({ length: 5 }, (_, i) => `${'a'.repeat(63)}${i}/x`)
  const BEFORE = '1'.repeat(40)
  const AFTER = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'
  const pushOf = (paths: string[]) => ({
    ref: 'refs/heads/main',
    before: BEFORE,
    after: AFTER,
    commits: [{ id: AFTER, message: 'Add files', added: paths, modified: [], removed: [] }]
  })
  const inputs = (server: { url: string }) => ({
    'api-key': API_KEY,
    'base-url': server.url,
    'include-commits': 'true',
    'github-token': '',
    services: 'api: **/*a*a*a*a*a*a*a*b\nweb: web/**'
  })

  it('are cut short at the selection bound: every service is recorded, with the reason', async () => {
    const server = await hostile((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.end(JSON.stringify({ id: `chg-${server.requests.length}` }))
    })
    const run = await runAction({
      inputs: inputs(server),
      payload: pushOf(SLOW_PATHS),
      caCertPath: certPath,
      timeoutMs: 15_000
    })
    expect(run.exitCode).toBe(0)
    expect(server.requests).toHaveLength(2)
    expect(run.stdout).toMatch(
      /::notice::Every service is recorded: matching .* took longer than 2 s/
    )
    expect(run.durationMs).toBeLessThan(6000)
  })

  it('do not hide a cancellation: a signal during the selection is reported once it ends', async () => {
    let child: ChildProcess | undefined
    let signalledAt = 0
    let spawnedAt = 0
    const server = await hostile((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.end('{"id":"chg-1"}')
    })
    const run = await runAction({
      inputs: inputs(server),
      payload: pushOf(SLOW_PATHS),
      caCertPath: certPath,
      timeoutMs: 15_000,
      onSpawn: spawned => {
        child = spawned
        spawnedAt = performance.now()
        setTimeout(() => {
          signalledAt = performance.now() - spawnedAt
          child?.kill('SIGTERM')
        }, 600)
      }
    })
    expect(signalledAt).toBeGreaterThan(0)
    expect(run.exitCode).toBe(143)
    expect(run.outputs['error']).toMatch(/cancelled \(SIGTERM\)/)
    expect(run.stdout).toMatch(/^::warning::.*cancel/im)
    // The selection holds the event loop for at most its 2 s bound; then the exit is prompt.
    expect(run.exitAtMs - signalledAt).toBeLessThan(2000 + 1000)
  })
})

describe('the key never shows, in any form', () => {
  it.each([
    ['as it is', ''],
    ['after 480 characters, where a 500-character cut falls inside it', 'a'.repeat(480)]
  ])('echoed in a change read back %s', async (_where, before) => {
    const server = await hostile((_request, response) =>
      replyJson(response, 200, {
        id: 'chg-1',
        service: 'octo-org/octo-repo',
        version: 'a1b2c3d',
        description: `${before}${API_KEY}`
      })
    )
    const run = await actionAgainst(
      { apiKey: API_KEY, url: server.url },
      certPath
    )({
      command: 'get-change',
      'change-id': 'chg-1'
    })
    expect(run.exitCode).toBe(0)
    const secretPart = API_KEY.slice('sk_live_'.length)
    for (const text of [run.summary, everythingSeen(run)]) {
      expect(text).not.toContain(API_KEY)
      expect(text).not.toContain(API_KEY.replace(/_/g, '\\_'))
      expect(text).not.toContain(secretPart.slice(0, 8))
    }
  })

  // A key with characters that percent-encoding changes.
  const KEY = 'sk_live_Ab+/cd=ef:gh12345678'
  const fullyEncoded = [...Buffer.from(KEY)]
    .map(byte => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
    .join('')
  const unicodeEscaped = [...KEY]
    .map(char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('')

  it.each([
    ['base64', Buffer.from(KEY).toString('base64')],
    [
      'lowercase percent-encoded',
      encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, hex => hex.toLowerCase())
    ],
    ['fully percent-encoded', fullyEncoded],
    ['\\u-escaped', unicodeEscaped]
  ])('echoed %s in an error body without a message field', async (_form, encoded) => {
    const server = await hostile((_request, response) => {
      response.writeHead(400, { 'Content-Type': 'application/json' })
      // Written by hand: JSON.stringify would escape the backslashes of the \u form.
      response.end(`{"detail":"bad key ${encoded}"}`)
    })
    const run = await actionAgainst({ apiKey: KEY, url: server.url }, certPath)({})
    expect(run.exitCode).toBe(1)
    expect(run.stdout).toMatch(/^::error::POST \/v2\/change.*400/m)
    const seen = everythingSeen(run, KEY)
    expect(seen).not.toContain(encoded)
    expect(seen).not.toContain(KEY)
  })
})

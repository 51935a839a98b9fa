/**
 * The bundled action as a real process against hostile answers (the emulator's faults) and
 * inputs on loopback: nothing from outside becomes a workflow command, memory stays bounded, an
 * outage ends within its bound, secrets never show in anything the runner sees, and a cancelled
 * run leaves a trace. What the transport, the redactor and the parsers prove in process (proxies,
 * size cap, classification, encoded keys, credentials in base-url, deep JSON) is tested there, as
 * is what report.test.ts proves of outside text (terminal escapes, bidi controls) and of the key.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import type { ChildProcess } from 'node:child_process'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testCertificate } from '../../emulator/tls.ts'
import {
  actionAgainst,
  runAction,
  TEST_GITHUB_TOKEN,
  type ActionRun
} from '../support/run-action.ts'
import { Emulator, type Fault } from '../../emulator/emulator.ts'

const API_KEY = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'

let certPath: string
let workspace: string
let emulator: Emulator
let against: ReturnType<typeof actionAgainst>

beforeAll(async () => {
  certPath = (await testCertificate()).certPath
  workspace = mkdtempSync(join(tmpdir(), 'cta-trust-'))
  emulator = await Emulator.start({ apiKey: API_KEY })
  against = actionAgainst({ apiKey: API_KEY, url: emulator.url }, certPath)
})
beforeEach(() => emulator.reset())
afterAll(async () => {
  await emulator.close()
  rmSync(workspace, { recursive: true, force: true })
})

/** Every request to `route` is answered with `fault`. */
function answer(route: string, fault: Fault): void {
  emulator.inject(route, fault, Infinity)
}
const json = (status: number, body: unknown, headers?: Record<string, string>): Fault => ({
  status,
  body: JSON.stringify(body),
  headers
})

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
    answer('POST /v1/heartbeat/*', json(200, { id: SIGNAL_ID }))
    const run = await against({ command: 'heartbeat', 'heartbeat-id': 'nightly' })

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
    answer('POST /v1/heartbeat/*', json(200, { id: 'sig-1 ##[set-output name=change-id;]pwned' }))
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
})

describe('bounded memory for any events file', () => {
  /** Loose enough for CI, far below what reading a 3 GB line costs (8 GB was seen). */
  const MAX_PEAK_RSS_BYTES = 200 * 1024 * 1024
  const HUGE_BYTES = '3G'

  it.each([
    ['a 3 GB file in one line', '', 1],
    ['one valid event, then a 3 GB line', '{"name":"deploy","data":{"ok":true}}\n', 2]
  ])('refuses %s, naming the line, with bounded memory', async (_what, head, line) => {
    const path = join(workspace, `huge-${line}.ndjson`)
    writeFileSync(path, head)
    // Sparse: the file reads as 3 GB of NUL bytes and costs no disk.
    execFileSync('truncate', ['-s', HUGE_BYTES, path])
    try {
      const run = await runAction({
        inputs: {
          'api-key': API_KEY,
          'base-url': emulator.url,
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
      expect(run.stdout).toMatch(new RegExp(`^::error::.*events-file.*line ${line}\\b`, 'm'))
      expect(emulator.requests).toEqual([])
      expect(run.peakRssBytes).toBeLessThan(MAX_PEAK_RSS_BYTES)
    } finally {
      rmSync(path, { force: true })
    }
  })
})

describe('an outage whose answers are a megabyte of text like "a.a.…a://x"', () => {
  it('ends within max-attempts × timeout-seconds plus the backoff, the password nowhere', async () => {
    answer('POST /v2/change', {
      status: 503,
      body: `https://bot:pw-0123@h/ ${'a.'.repeat(512 * 1024)}a://x`
    })
    const run = await against({ 'max-attempts': '3', 'timeout-seconds': '2' })
    expect(emulator.requests).toHaveLength(3)
    expect(run.exitCode).toBe(0)
    // Three attempts of at most 2 s, and two backoffs of at most 0.5 s and 1 s.
    expect(run.exitAtMs).toBeLessThan(3 * 2000 + 500 + 1000)
    expect(run.stdout).toMatch(
      /^::warning::POST \/v2\/change failed with HTTP 503 .*after 3 attempts/m
    )
    const shown = `${run.stdout}${run.stderr}${run.summary}${JSON.stringify(run.outputs)}`
    expect(shown.includes('pw-0123')).toBe(false)
  })
})

describe('a cancelled run leaves a trace', () => {
  // SIGTERM during a hung attempt: e2e/job-end.test.ts (at the post step) and e2e/shipped.test.ts;
  // the words of the trace: report.test.ts (finish: a cancel).
  it('SIGTERM during a retry wait ends the step within the 2 s the docs promise (143)', async () => {
    answer('POST /v2/change', json(503, 'maintenance', { 'Retry-After': '30' }))
    let signalledAt = 0
    const run = await runAction({
      inputs: { 'api-key': API_KEY, 'base-url': emulator.url, 'timeout-seconds': '30' },
      caCertPath: certPath,
      // Without its own handler the action would wait 30 s, and be cut here.
      timeoutMs: 15_000,
      onSpawn: child => {
        const spawnedAt = performance.now()
        // The step says it waits for the retry just before it does.
        child.stdout?.on('data', (text: Buffer) => {
          if (signalledAt > 0 || !text.includes('; retry 1 of')) return
          signalledAt = performance.now() - spawnedAt
          child.kill('SIGTERM')
        })
      }
    })
    expect(signalledAt).toBeGreaterThan(0)
    expect(emulator.requests).toHaveLength(1)
    // The action's own handler ends it, with the signal's exit code.
    expect(run.signal).toBeNull()
    expect(run.exitCode).toBe(143)
    expect(run.exitAtMs - signalledAt).toBeLessThan(2000)
    expect(run.outputs['error']).toMatch(/cancelled .*A change \(POST \/v2\/change\) was in flight/)
    expect(run.stdout).toMatch(/^::warning::.*cancel/im)
    expect(run.summary).toMatch(/may already have been recorded/)
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

  it('do not hide a cancellation: a signal during the selection is reported once it ends', async () => {
    let child: ChildProcess | undefined
    let signalledAt = 0
    let spawnedAt = 0
    const run = await runAction({
      inputs: inputs(emulator),
      payload: pushOf(SLOW_PATHS),
      caCertPath: certPath,
      timeoutMs: 15_000,
      onSpawn: spawned => {
        child = spawned
        spawnedAt = performance.now()
        // Once what shipped is said, the selection is next, however long the start took.
        child.stdout?.on('data', (text: Buffer) => {
          if (signalledAt > 0 || !text.includes('What the change ships')) return
          signalledAt = performance.now() - spawnedAt
          child?.kill('SIGTERM')
        })
      }
    })
    expect(signalledAt).toBeGreaterThan(0)
    expect(run.exitCode).toBe(143)
    expect(run.outputs['error']).toMatch(/cancelled \(SIGTERM\)/)
    expect(run.stdout).toMatch(/^::warning::.*cancel/im)
    // The selection holds the event loop for at most its 2 s bound; then the exit is prompt.
    expect(run.exitAtMs - signalledAt).toBeLessThan(2000 + 5000)
  })
})

describe('the key never shows, in any form', () => {
  // The key echoed whole: report.test.ts redacts it from every output, log line and cell.
  it('echoed in a change read back after 480 characters, where a 500-character cut falls inside it', async () => {
    const before = 'a'.repeat(480)
    answer(
      'GET /v2/change/*',
      json(200, {
        id: 'chg-1',
        service: 'octo-org/octo-repo',
        version: 'a1b2c3d',
        description: `${before}${API_KEY}`
      })
    )
    const run = await against({ command: 'get-change', 'change-id': 'chg-1' })
    expect(run.exitCode).toBe(0)
    const secretPart = API_KEY.slice('sk_live_'.length)
    for (const text of [run.summary, everythingSeen(run)]) {
      expect(text).not.toContain(API_KEY)
      expect(text).not.toContain(API_KEY.replace(/_/g, '\\_'))
      expect(text).not.toContain(secretPart.slice(0, 8))
    }
  })
})

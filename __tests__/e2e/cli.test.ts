/**
 * The command line's bundle (dist/cli.cjs as the tests build it) as a process, under the machine's
 * system Node (20) unless a test says Node 24, against the emulator over HTTPS, with a GitLab CI
 * job's variables: `run` wraps a real child process, keeps its exit status, passes a SIGTERM on
 * and records how the deploy ended; signals outside the deploy, a key file read to its bound, Node
 * 24 and a proxy. The failure policy's cells, and what main() does in process (outages, a deploy
 * that cannot start, usage errors, hostile CI variables, a tag pipeline's checkout, the outputs
 * file) are tested in cli/policy.test.ts, cli/main.test.ts and cli/terminal.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { execFileSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { Emulator } from '../../emulator/emulator.ts'
import { TEST_SERVICE_HOST, testCertificate } from '../../emulator/tls.ts'
import { cliEntry } from '../support/bundle.ts'
import { startConnectProxy } from '../support/connect-proxy.ts'
import { arrivalOf } from '../support/arrival.ts'
import { gitlabJob } from '../../scripts/run-bundled-action.ts'
import { COMPILE_CACHE, NODE_24, spawnNode, type NodeRun } from '../support/run-action.ts'

/** The machine's own Node, the first on PATH that is not the project's: 20 on CI. */
const SYSTEM_NODE = (process.env['PATH'] ?? '')
  .split(delimiter)
  .filter(folder => folder !== '' && !folder.includes('node_modules'))
  .map(folder => join(folder, 'node'))
  .find(path => {
    try {
      return execFileSync(path, ['--version'], { encoding: 'utf8' }).startsWith('v')
    } catch {
      return false
    }
  })!

const SHA = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'
const GITLAB = gitlabJob(SHA)

let emulator: Emulator
let certPath: string
let entry: string
let work: string

beforeAll(async () => {
  certPath = (await testCertificate()).certPath
  emulator = await Emulator.start()
  entry = await cliEntry()
  work = mkdtempSync(join(tmpdir(), 'cta-cli-'))
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(() => emulator.reset())

/** `change-tracking ARGS` in a GitLab job, with the key in its variable. */
function cli(
  args: string[],
  options: {
    env?: Record<string, string>
    node?: string
    onSpawn?: Parameters<typeof spawnNode>[4]
    cwd?: string
  } = {}
): Promise<NodeRun> {
  const env = {
    PATH: process.env['PATH'],
    NODE_EXTRA_CA_CERTS: certPath,
    NODE_COMPILE_CACHE: COMPILE_CACHE,
    CHANGE_TRACKING_API_KEY: emulator.apiKey,
    CHANGE_TRACKING_BASE_URL: emulator.url,
    ...GITLAB,
    ...options.env
  }
  return spawnNode(
    [entry, ...args],
    env,
    options.cwd ?? work,
    15_000,
    options.onSpawn,
    options.node ?? SYSTEM_NODE
  )
}

const node = (script: string): string[] => [process.execPath, '-e', script]
const stored = () => [...emulator.changes.values()]
const metadataOf = (change: { custom_metadata?: unknown }) =>
  JSON.parse(String(change.custom_metadata)) as Record<string, Record<string, unknown>>

describe('change-tracking run', () => {
  it('keeps the deploy’s exit status, and records the failed deploy from the CI’s context', async () => {
    const outputs = join(work, 'outputs.env')
    const summary = join(work, 'summary.md')
    const run = await cli([
      'run',
      '--json',
      '--outputs',
      outputs,
      '--summary',
      summary,
      '--',
      'sh',
      '-c',
      'exit 3'
    ])
    expect(run.exitCode).toBe(3)
    expect(execFileSync(SYSTEM_NODE, ['--version'], { encoding: 'utf8' })).toMatch(/^v\d+/)
    const [change] = stored()
    expect(change).toMatchObject({
      service: 'acme/shop',
      version: SHA,
      user: 'alice',
      environment: 'production',
      // The work folder is no checkout: no path could be read, so no risk label, and says why.
      labels: 'outcome:failure'
    })
    expect(metadataOf(change)['git']).toMatchObject({
      risk_complete: false,
      risk_unknown: 'no checkout'
    })
    expect(metadataOf(change)['deploy']).toMatchObject({ outcome: 'failure' })
    expect(metadataOf(change)['ci']).toMatchObject({
      provider: 'gitlab',
      build_number: '4242',
      job_url: GITLAB['CI_JOB_URL'],
      branch: 'main'
    })
    expect(JSON.parse(run.stdout)).toMatchObject({ 'change-id': change.id })
    expect(readFileSync(outputs, 'utf8')).toContain(`CHANGE_ID=${change.id}\n`)
    expect(readFileSync(summary, 'utf8')).toMatch(
      /^## Deploy failed after \d+ s&#58; change recorded/
    )
    expect(emulator.requests.map(r => `${r.method} ${r.rawPath}`)).toEqual([
      'GET /v2/hello',
      'POST /v2/change'
    ])
  })

  it('passes a SIGTERM on to the deploy, waits for it, and records it as cancelled', async () => {
    const deploy = node(`console.log('deploying'); setInterval(() => {}, 1000)`)
    const run = await cli(['run', '--', ...deploy], {
      onSpawn: child =>
        child.stdout?.on('data', (text: Buffer) => {
          if (text.includes('deploying')) child.kill('SIGTERM')
        })
    })
    expect(run.exitCode).toBe(143)
    expect(stored()).toHaveLength(1)
    expect(stored()[0].labels).toBe('outcome:cancelled')
  })
})

describe('change-tracking run, signalled outside the deploy', () => {
  /** Sends `signal` once the emulator has received `route`, whose answer never comes. */
  function signalWhenAsked(route: string, signal: NodeJS.Signals) {
    emulator.inject(route, { hang: true }, Infinity)
    return (child: ChildProcess) => {
      void arrivalOf(emulator, route).then(() => child.kill(signal))
    }
  }

  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
    ['SIGINT', 130]
  ] as const)(
    'after a successful deploy, %s stops the recording at once, writes the files and exits %i',
    async (signal, exitCode) => {
      const outputs = join(work, `outputs-${signal}.env`)
      const summary = join(work, `summary-${signal}.md`)
      const args = ['run', '--json', '--outputs', outputs, '--summary', summary]
      const run = await cli([...args, '--', 'true'], {
        onSpawn: signalWhenAsked('POST /v2/change', signal)
      })
      expect(run.exitCode).toBe(exitCode)
      expect(run.stderr).toMatch(new RegExp(`^warning: The run was cancelled \\(${signal}\\)`, 'm'))
      expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toMatchObject({
        error: expect.stringContaining(`cancelled (${signal})`)
      })
      expect(readFileSync(outputs, 'utf8')).toMatch(/^ERROR=The%20run%20was%20cancelled/m)
      expect(readFileSync(summary, 'utf8')).toContain('Cancelled')
    }
  )

  it('during the key check, SIGHUP leaves the deploy unstarted: one line, 129, nothing recorded', async () => {
    const marker = join(work, 'deployed-after-sighup')
    const deploy = ['sh', '-c', 'printf x > "$0"', marker]
    const run = await cli(['run', '--', ...deploy], {
      onSpawn: signalWhenAsked('GET /v2/hello', 'SIGHUP')
    })
    expect(run.exitCode).toBe(129)
    expect(run.stderr).toMatch(
      /^warning: The deploy was not started: SIGHUP arrived during the key check\.$/m
    )
    expect(readFileSafe(marker)).toBe('')
    expect(stored()).toEqual([])
  })
})

describe('change-tracking with a key file that never ends', () => {
  it('reads /dev/zero no further than its bound: one line naming --api-key-file, nothing sent', async () => {
    const run = await cli(['run', '--api-key-file', '/dev/zero', '--', 'true'])
    expect(run.exitCode).toBe(1)
    expect(run.stderr).toMatch(/^error: --api-key-file is too large: more than 64 KiB\. /m)
    expect(emulator.requests).toEqual([])
  })
})

describe('the command line', () => {
  it('runs on Node 24 too, and goes through HTTPS_PROXY on Node 20', async () => {
    // A host that does not resolve: only a request that went through the proxy reaches the service.
    const proxy = await startConnectProxy({
      route: () => ({ host: '127.0.0.1', port: emulator.port })
    })
    try {
      const service = `${TEST_SERVICE_HOST}:${emulator.port}`
      const viaProxy = await cli(['hello', '--base-url', `https://${service}/`], {
        env: { HTTPS_PROXY: proxy.url }
      })
      expect(viaProxy.exitCode).toBe(0)
      expect(proxy.connects).toEqual([service])
    } finally {
      await proxy.close()
    }
    const on24 = await cli(['change', '--dry-run'], { node: NODE_24 })
    expect(on24.exitCode).toBe(0)
    expect(on24.stderr).toContain('[dry-run] POST')
    expect(emulator.requests).toHaveLength(1)
  })
})

describe('a change outside a checkout', () => {
  it('records with none of the work it does not need: no locale data loaded, no git started', async () => {
    // A probe that notes each start of the locale's number formatting (its first costs a tenth of
    // a start) and of a process.
    const noted = join(work, 'probe-notes')
    const probe = join(work, 'probe.cjs')
    writeFileSync(
      probe,
      `const { appendFileSync } = require('node:fs')
const note = what => appendFileSync(${JSON.stringify(noted)}, what + '\\n')
const format = Number.prototype.toLocaleString
Number.prototype.toLocaleString = function (...args) { note('toLocaleString'); return format.apply(this, args) }
const childProcess = require('node:child_process')
const spawn = childProcess.spawn
childProcess.spawn = (...args) => { note('spawn ' + args[0]); return spawn(...args) }
`
    )
    const run = await cli(['change'], { env: { NODE_OPTIONS: `--require ${probe}` } })
    expect(run.exitCode).toBe(0)
    expect(emulator.requests).toHaveLength(1)
    expect(readFileSafe(noted)).toBe('')
  })
})

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

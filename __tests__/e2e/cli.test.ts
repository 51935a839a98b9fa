/**
 * The command line's bundle (dist/cli.js as the tests build it) as a process, under the machine's
 * system Node (20) unless a test says Node 24, against the emulator over HTTPS, with a GitLab CI
 * job's variables: `run` wraps a real child process, keeps its exit status, passes a SIGTERM on
 * and records how the deploy ended; outages and a rejected key never change the deploy's status.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { execFileSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { Emulator } from '../../emulator/emulator.ts'
import { TEST_SERVICE_HOST, testCertificate } from '../../emulator/tls.ts'
import { cliEntry } from '../support/bundle.ts'
import { gitEnv, TestRepository } from '../support/git-repository.ts'
import { startConnectProxy } from '../support/connect-proxy.ts'
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
const GITLAB_HOSTILE_USER = '::warning::pwned [click](https://evil.example) **bold** ##[error]x'

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
      ...node('process.exit(3)')
    ])
    expect(run.exitCode).toBe(3)
    expect(execFileSync(SYSTEM_NODE, ['--version'], { encoding: 'utf8' })).toMatch(/^v\d+/)
    const [change] = stored()
    expect(change).toMatchObject({
      service: 'acme/shop',
      version: SHA,
      user: 'alice',
      environment: 'production',
      // The work folder is no checkout: what shipped was not read, so neither was all its risk.
      labels: 'outcome:failure,risk:incomplete'
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
    expect(stored()[0].labels).toBe('outcome:cancelled,risk:incomplete')
  })

  it('runs the deploy through an outage, keeps its status and says the change was not recorded', async () => {
    emulator.inject('GET /v2/hello', { status: 503 }, Infinity)
    emulator.inject('POST /v2/change', { status: 503 }, Infinity)
    const run = await cli(['run', '--max-attempts', '1', '--', ...node('process.exit(0)')])
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toMatch(
      /^warning: GET \/v2\/hello failed with HTTP 503.*The deploy runs; its change will be recorded when it ends\.$/m
    )
    expect(run.stderr).toMatch(/^warning: POST \/v2\/change failed with HTTP 503/m)
  })

  // The failure policy's false column through the bundle (auto and true: the key file and the
  // signal cases below); every cell is proven in process in cli/policy.test.ts.
  it('with a rejected key under fail-on-error false runs the deploy, unrecorded, and exits 0', async () => {
    const marker = join(work, 'deployed-false')
    const deploy = node(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`)
    const run = await cli(['run', '--fail-on-error', 'false', '--', ...deploy], {
      env: { CHANGE_TRACKING_API_KEY: 'not-the-key' }
    })
    expect(run.exitCode).toBe(0)
    expect(readFileSafe(marker)).toBe('x')
    expect(stored()).toEqual([])
    expect(run.stderr).toMatch(/^warning: .*rejected the API key.*The deploy runs, unrecorded/m)
    expect(run.stderr).not.toContain('not-the-key')
  })

  it('refuses a deploy command that cannot start: 127, and no change', async () => {
    const run = await cli(['run', '--', 'change-tracking-no-such-deploy'])
    expect(run.exitCode).toBe(127)
    expect(run.stderr).toMatch(
      /^error: The deploy command "change-tracking-no-such-deploy" was not found/m
    )
    expect(stored()).toEqual([])
  })
})

describe('change-tracking run, signalled outside the deploy', () => {
  /** Sends `signal` once the emulator has received `route`, while its answer hangs. */
  function signalWhenAsked(route: string, signal: NodeJS.Signals) {
    emulator.inject(route, { hang: true }, Infinity)
    return (child: ChildProcess) => {
      const poll = setInterval(() => {
        if (emulator.requestsTo(route).length === 0) return
        clearInterval(poll)
        child.kill(signal)
      }, 20)
      child.on('exit', () => clearInterval(poll))
    }
  }

  it.each([
    ['SIGTERM', 'auto', 0],
    ['SIGHUP', 'auto', 0],
    ['SIGINT', 'true', 1]
  ] as const)(
    'after a successful deploy, %s stops the recording at once, writes the files and exits with the deploy’s status (fail-on-error %s: %i)',
    async (signal, policy, exitCode) => {
      const outputs = join(work, `outputs-${signal}.env`)
      const summary = join(work, `summary-${signal}.md`)
      // prettier-ignore
      const args = ['run', '--fail-on-error', policy, '--json', '--outputs', outputs, '--summary', summary]
      const run = await cli([...args, '--', ...node('process.exit(0)')], {
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
    const deploy = node(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`)
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
  it('reads /dev/zero no further than its bound: one line naming --api-key-file, exit 1, nothing sent', async () => {
    const change = await cli(['change', '--api-key-file', '/dev/zero'])
    expect(change.exitCode).toBe(1)
    expect(change.stderr).toMatch(/^error: --api-key-file is too large: more than 64 KiB\.$/m)
    expect(emulator.requests).toEqual([])
  })

  it('still runs the deploy under auto, unrecorded, then exits 1', async () => {
    const marker = join(work, 'deployed-with-bad-key-file')
    const deploy = node(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`)
    const run = await cli(['run', '--api-key-file', '/dev/zero', '--', ...deploy])
    expect(run.exitCode).toBe(1)
    expect(readFileSafe(marker)).toBe('x')
    expect(run.stderr).toContain('--fail-on-error false')
    expect(emulator.requests).toEqual([])
  })
})

describe('change-tracking change, in a GitLab tag pipeline’s checkout', () => {
  it('records what shipped since the previous tag: the migration, the revert, and their labels', async () => {
    const repo = new TestRepository(join(work, 'shop'), gitEnv(work))
    const first = repo.commit('Initial commit', { 'README.md': '# Shop\n' })
    repo.dated(['tag', '-a', 'v1.0.0', '-m', 'v1.0.0'])
    repo.commit('Add the orders table (#12)', { 'db/migrations/002_orders.sql': 'create;\n' })
    const banner = repo.commit('Show a banner (#13)', { 'web/banner.ts': 'export {}\n' })
    const head = repo.dated(['revert', '--no-edit', banner])
    repo.dated(['tag', '-a', 'v1.1.0', '-m', 'v1.1.0'])
    const origin = 'https://gitlab-ci-token:s3cret@gitlab.example.com/acme/shop.git'
    repo.git(['remote', 'add', 'origin', origin])
    const run = await cli(['change'], {
      cwd: repo.path,
      env: {
        ...gitEnv(work),
        CI_COMMIT_SHA: head,
        CI_COMMIT_TAG: 'v1.1.0',
        CI_SERVER_URL: 'https://gitlab.example.com'
      }
    })
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toContain(`previous deploy ${first} (from previous-tag), 3 commits`)
    const [change] = stored()
    expect(change.labels).toBe('remediation:revert,risk:migration')
    expect(metadataOf(change)['ci']).toMatchObject({ provider: 'gitlab', tag: 'v1.1.0' })
    expect(metadataOf(change)['git']).toMatchObject({
      source: 'git',
      previous_sha: first,
      commit_count: 3,
      compare_url: `https://gitlab.example.com/acme/shop/-/compare/${first}...${head}`,
      risk: { migration: ['db/migrations/002_orders.sql'] }
    })
    expect(metadataOf(change)['remediation']).toEqual({ type: 'revert', reverts: [banner] })
    expect(JSON.stringify(change) + run.stderr).not.toContain('s3cret')
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

  it('refuses a wrong command line with exit 2, before any request', async () => {
    const typo = await cli(['change', '--enviroment', 'prod'])
    expect(typo.exitCode).toBe(2)
    expect(typo.stderr).toMatch(/unknown option '--enviroment'[\s\S]*--environment/)
    const key = await cli(['change', '--api-key', 'sk_live_secret'])
    expect(key.exitCode).toBe(2)
    expect(key.stderr).toContain('process listings and shell history')
    expect(key.stderr).not.toContain('sk_live_secret')
    expect(emulator.requests).toEqual([])
  })

  it('keeps hostile branch and user names inert in the summary file, the JSON and standard error', async () => {
    const summary = join(work, 'hostile.md')
    const run = await cli(['change', '--json', '--summary', summary], {
      env: {
        CI_COMMIT_REF_NAME: 'main\u202e<img src=x onerror=alert(1)>',
        GITLAB_USER_LOGIN: GITLAB_HOSTILE_USER
      }
    })
    expect(run.exitCode).toBe(0)
    const [change] = stored()
    expect(change.user).toBe(GITLAB_HOSTILE_USER)
    const written = readFileSync(summary, 'utf8')
    expect(written).not.toMatch(/<img|\]\(https:\/\/evil|\*\*bold|\u202e/)
    expect(JSON.parse(run.stdout)).toMatchObject({ 'change-id': change.id })
    for (const line of run.stderr.split(/\r?\n|\r/)) expect(line).not.toMatch(/^\s*::|##\[/)
  })

  it('writes outputs that a shell sources without running anything, whatever the service said', async () => {
    const hostile = `$(touch ${join(work, 'pwned')}); \`id\` 'q' "d" \\ \n# x=1`
    emulator.inject('GET /v2/change/*', {
      status: 200,
      body: JSON.stringify({ id: 'c-1', service: 's', user: hostile, description: hostile })
    })
    const outputs = join(work, 'read.env')
    const run = await cli(['get-change', '--change-id', 'c-1', '--outputs', outputs, '--json'])
    expect(run.exitCode).toBe(0)
    const sourced = execFileSync('sh', ['-c', `set -a; . "${outputs}"; printf %s "$CHANGE"`], {
      encoding: 'utf8'
    })
    expect(readFileSafe(join(work, 'pwned'))).toBe('')
    expect(JSON.parse(decodeURIComponent(sourced)).user).toBe(hostile)
    expect(JSON.parse(run.stdout).change).toBe(decodeURIComponent(sourced))
  })
})

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

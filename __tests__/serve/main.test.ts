/**
 * `change-tracking serve`: what it refuses to start without (exit 2, one line), what it prints,
 * and, as processes against the emulator, that nothing accepted is lost: a receiver killed with
 * SIGKILL and started again sends each accepted change once, a second receiver on the same folder
 * refuses to start, and SIGTERM keeps what waits for the next start; and that what a deploy
 * shipped is read from the forge its variables name, the fake GitHub API or a loopback GitLab,
 * with no token in its log or state.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals'
import { spawn, type ChildProcess } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Emulator } from '../../emulator/emulator.ts'
import { FakeGitHub } from '../../emulator/github.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { serve } from '../../src/serve/main.ts'
import { applyInput } from '../../src/serve/server.ts'
import { StateFolder } from '../../src/serve/state.ts'
import { startLoopback } from '../support/loopback.ts'
import { useEmulator } from '../support/use-emulator.ts'
import { SHOP_REPOSITORY, SHOP_TOKEN } from './fixtures/shop-repository.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})

const SECRET = 'webhook-secret-0123456789abcdef'
const FIXTURE = '__tests__/serve/fixtures/serve.ts'
let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cta-serve-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** serve() in this process, for what it does before it listens: its status and its lines. */
async function serveHere(argv: string[], env: Record<string, string | undefined>) {
  const stdout: string[] = []
  const stderr: string[] = []
  const status = await serve(argv, env, {
    stdout: text => stdout.push(text),
    stderr: line => stderr.push(line),
    cwd: dir
  })
  return { status, stdout: stdout.join(''), stderr }
}

const ready = () => ({
  CHANGE_TRACKING_API_KEY: emulator.apiKey,
  CHANGE_TRACKING_BASE_URL: emulator.url,
  CHANGE_TRACKING_WEBHOOK_SECRET: SECRET
})
const notStarted = ' The receiver did not start.'

describe('serve refuses to start, with one line that says what to do', () => {
  it.each([
    [
      'without a webhook secret',
      { CHANGE_TRACKING_WEBHOOK_SECRET: undefined },
      'No webhook secret: set CHANGE_TRACKING_WEBHOOK_SECRET, or give --webhook-secret-file FILE (make one with: openssl rand -hex 32).'
    ],
    [
      'with a short webhook secret',
      { CHANGE_TRACKING_WEBHOOK_SECRET: 'short' },
      'CHANGE_TRACKING_WEBHOOK_SECRET must hold at least 16 visible ASCII characters and nothing else, as Argo CD sends it in a header (make one with: openssl rand -hex 32).'
    ],
    [
      'without an API key',
      { CHANGE_TRACKING_API_KEY: '' },
      'No API key: set CHANGE_TRACKING_API_KEY.'
    ],
    [
      'without the service’s address',
      { CHANGE_TRACKING_BASE_URL: undefined },
      "CHANGE_TRACKING_BASE_URL is required: the service's address, an absolute HTTPS URL such as https://api.example.com/."
    ],
    [
      'with a plain HTTP address',
      { CHANGE_TRACKING_BASE_URL: 'http://api.example.com/' },
      'CHANGE_TRACKING_BASE_URL must use HTTPS: plain HTTP is refused because the API key would travel in clear text. Use https:// instead; got "http://api.example.com".'
    ],
    [
      'with a forge that is not on https',
      { GITLAB_URL: 'gitlab.example.com' },
      'GITLAB_URL must be an https:// address, as its token may be sent there.'
    ],
    [
      'with a port that is not one',
      { CHANGE_TRACKING_PORT: '80a' },
      'CHANGE_TRACKING_PORT must be a whole number from 0 to 65535; got "80a".'
    ]
  ])('%s', async (_, env, line) => {
    const { status, stderr } = await serveHere([], { ...ready(), ...env })
    expect(status).toBe(2)
    expect(stderr).toEqual([`error: ${line}${notStarted}`])
  })

  it('names the flag when the value came from one', async () => {
    const { stderr } = await serveHere(['--port', '99999', '--base-url', 'ftp://x'], ready())
    expect(stderr).toEqual([
      `error: --port must be a whole number from 0 to 65535; got "99999".${notStarted}`
    ])
  })

  it('never takes the API key from a flag, nor repeats it', async () => {
    const { status, stderr } = await serveHere(['--api-key', 'flag-key-123456'], ready())
    expect(status).toBe(2)
    expect(stderr).toEqual([
      'error: The API key is never taken from a flag, which process listings show: set CHANGE_TRACKING_API_KEY.'
    ])
  })

  it('reads the webhook secret from a file, without its final line break', async () => {
    const file = join(dir, 'secret')
    writeFileSync(file, 'short\n')
    const short = await serveHere(['--webhook-secret-file', file], ready())
    expect(short.stderr[0]).toMatch(/^error: --webhook-secret-file must hold at least 16 visible/)
    const missing = await serveHere(['--webhook-secret-file', join(dir, 'none')], ready())
    expect(missing.stderr).toEqual([
      `error: --webhook-secret-file could not be read (ENOENT).${notStarted}`
    ])
    // A secret read: the next thing it needs is its folder, here a file.
    writeFileSync(file, `${SECRET}\n`)
    writeFileSync(join(dir, 'taken'), '')
    const env = { ...ready(), CHANGE_TRACKING_WEBHOOK_SECRET: undefined }
    const read = await serveHere(['--webhook-secret-file', file, '--state-dir', 'taken'], env)
    expect(read.stderr).toEqual([
      `error: The state folder (--state-dir): ${join(dir, 'taken')} is not a folder.${notStarted}`
    ])
  })

  it('refuses a usage error as commander says it, and prints its help', async () => {
    expect((await serveHere(['--log-format', 'xml'], ready())).stderr[0]).toMatch(
      /^error: option '--log-format <format>' argument 'xml' is invalid/
    )
    const help = await serveHere(['--help'], {})
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('--webhook-secret-file <path>')
    expect(help.stdout).not.toContain('--api-key')
  })
})

describe('serve --print-config', () => {
  it('prints the manifests without needing, or printing, a key or a secret', async () => {
    const env = {
      CHANGE_TRACKING_API_KEY: 'key-that-is-secret',
      CHANGE_TRACKING_WEBHOOK_SECRET: SECRET
    }
    const printed = await serveHere(
      ['--print-config', 'flux', '--public-url', 'http://r.tools:80'],
      env
    )
    expect(printed.status).toBe(0)
    expect(printed.stdout).toContain('address: "http://r.tools/flux"')
    expect(printed.stdout).not.toContain(SECRET)
    expect(printed.stdout).not.toContain('key-that-is-secret')
    const refused = await serveHere(['--print-config', 'argocd', '--public-url', 'receiver'], {})
    expect(refused.status).toBe(2)
  })
})

/** A receiver as a process; its log lines as they come, each pattern's matches awaited. */
const running: ChildProcess[] = []
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

class Receiver {
  readonly child: ChildProcess
  readonly lines: string[] = []
  readonly exited: Promise<number | null>
  private readonly waiters: Array<() => void> = []

  /** `fileBlocks`: the most (in 512-byte blocks) it may write to a file: a folder that fills. */
  constructor(env: Record<string, string>, fileBlocks = 'unlimited') {
    const command = [process.execPath, FIXTURE, '--port', '0', '--host', '127.0.0.1']
    this.child = spawn('sh', ['-c', 'ulimit -f "$0" && exec "$@"', fileBlocks, ...command], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    running.push(this.child)
    createInterface({ input: this.child.stdout! }).on('line', line => {
      this.lines.push(line)
      for (const waiter of this.waiters) waiter()
    })
    this.exited = new Promise(resolve =>
      this.child.on('exit', code => {
        for (const waiter of this.waiters) waiter()
        resolve(code)
      })
    )
  }

  /** The lines matching `pattern`, once there are `count`; rejects if the process ends first. */
  until(pattern: RegExp, count = 1): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.lines.filter(line => pattern.test(line))
        if (found.length >= count) resolve(found)
        else if (this.child.exitCode !== null) reject(new Error(`exited: ${this.lines.join('\n')}`))
      }
      this.waiters.push(check)
      check()
    })
  }

  async port(): Promise<number> {
    const [line] = await this.until(/^Listening on /)
    return Number(/ port (\d+) for Argo CD/.exec(line)![1])
  }
}

/** A recorded notification, its times moved so that its latest is a minute ago; `edit` changes it. */
function fresh(name: string, edit?: (body: { metadata: Record<string, string> }) => void): Buffer {
  const read = readFileSync(`__tests__/fixtures/gitops/${name}.json`, 'utf8')
  const body = JSON.parse(read)
  edit?.(body)
  const text = JSON.stringify(body)
  const times = text.match(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g) ?? []
  const shift = Date.now() - 60_000 - Math.max(...times.map(time => Date.parse(JSON.parse(time))))
  const moved = text.replace(/"(\d{4}-\d\d-\d\dT[\d:.]+Z)"/g, (_, time: string) =>
    JSON.stringify(new Date(Date.parse(time) + shift).toISOString())
  )
  return Buffer.from(moved)
}

/** POSTs a recorded notification, authenticated as its controller does; resolves with the status. */
function notify(port: number, name: string, body = fresh(name)): Promise<number> {
  const controller = name.split('-')[0]
  const headers =
    controller === 'argocd'
      ? { Authorization: `Bearer ${SECRET}` }
      : { 'X-Signature': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` }
  return new Promise((resolve, reject) => {
    const req = request({ port, method: 'POST', path: `/${controller}`, headers }, response => {
      response.resume()
      resolve(response.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('a receiver process', () => {
  it('loses nothing accepted: killed and started again, it sends each change once', async () => {
    const { certPath } = await testCertificate()
    const env = {
      ...ready(),
      NODE_EXTRA_CA_CERTS: certPath,
      CHANGE_TRACKING_STATE_DIR: join(dir, 'state')
    }
    // The service is down, and the folder has room for 12 KiB.
    emulator.inject('POST /v2/change', { status: 503 }, Infinity)
    const first = new Receiver(env, '24')
    const accepted = [
      'argocd-sync-healthy',
      'flux-kustomization-failed',
      'flux-kustomization-succeeded'
    ]
    const port = await first.port()
    for (const name of accepted) expect(await notify(port, name)).toBe(202)
    await first.until(/HTTP 503 Service Unavailable/)
    expect(emulator.changes.size).toBe(0)
    // A notification the folder has no room for gets 503; what it began to write is cut, so that
    // the next one fits.
    const release = 'flux-helmrelease-upgrade-succeeded'
    const large = fresh(release, body => {
      for (let index = 0; index < 16; index++) body.metadata[`note${index}`] = 'x'.repeat(500)
    })
    expect(await notify(port, release, large)).toBe(503)
    expect(await notify(port, release)).toBe(202)
    accepted.push(release)

    // A second receiver on the same folder refuses to start while the first runs.
    const second = await serveHere(['--state-dir', join(dir, 'state'), '--port', '0'], ready())
    expect(second.status).toBe(2)
    expect(second.stderr).toEqual([
      `error: The state folder (--state-dir): Another receiver uses ${join(dir, 'state')}: stop it first, or give each receiver its own folder.${notStarted}`
    ])

    first.child.kill('SIGKILL')
    await first.exited
    // The service is back; the receiver starts again over the lock the killed one left.
    emulator.reset()
    const again = new Receiver(env)
    const recorded = await again.until(/^Recorded change /, accepted.length)
    expect(recorded.map(line => / \(([^,]+), (\w+)\)\.$/.exec(line)!.slice(1))).toEqual([
      ['shop', 'success'],
      ['shop', 'failure'],
      ['shop', 'success'],
      ['web', 'success']
    ])
    expect(JSON.stringify([...emulator.changes.values()])).not.toContain('note0')
    expect(emulator.requestsTo('POST /v2/change')).toHaveLength(accepted.length)
    expect(emulator.changes.size).toBe(accepted.length)

    // Down again: what it accepts now waits, and SIGTERM keeps it for the next start.
    emulator.inject('POST /v2/change', { status: 503 }, Infinity)
    expect(await notify(await again.port(), 'flux-helmrelease-install-failed')).toBe(202)
    await again.until(/HTTP 503 Service Unavailable/)
    again.child.kill('SIGTERM')
    expect(await again.exited).toBe(0)
    expect(again.lines.slice(-2)).toEqual([
      'SIGTERM: no more notifications are accepted; stopping.',
      'Stopped; 1 change left for the next start.'
    ])
    const state = await StateFolder.open(join(dir, 'state'), applyInput)
    expect(state.waitingCount).toBe(1)
    await state.close()
    // The folder keeps no secret.
    for (const name of readdirSync(join(dir, 'state'))) {
      const text = readFileSync(join(dir, 'state', name), 'utf8')
      expect(text).not.toContain(SECRET)
      expect(text).not.toContain(emulator.apiKey)
    }
  })
})

describe('what a deploy shipped', () => {
  it('is read from the forge whose server hosts the repository, with its triage labels, and no token shows in the log or state', async () => {
    const cert = await testCertificate()
    const github = await FakeGitHub.start({ repository: SHOP_REPOSITORY, token: SHOP_TOKEN, cert })
    const gitlabToken = 'glpat-ShopT0kenThatMustNeverShow'
    // A GitLab that refuses the token, quoting it.
    const message = JSON.stringify({ message: `401 Unauthorized: ${gitlabToken} has expired` })
    const gitlab = await startLoopback((request, response) => {
      gitlabAsked.push({ path: request.url, token: request.headers['private-token'] })
      response.writeHead(401, { 'content-type': 'application/json' }).end(message)
    })
    const gitlabAsked: Array<{ path?: string; token?: string | string[] }> = []
    try {
      const receiver = new Receiver({
        ...ready(),
        NODE_EXTRA_CA_CERTS: cert.certPath,
        CHANGE_TRACKING_STATE_DIR: join(dir, 'state'),
        GITHUB_API_URL: github.url,
        GITHUB_TOKEN: SHOP_TOKEN,
        GITLAB_URL: gitlab.url,
        GITLAB_TOKEN: gitlabToken
      })
      const port = await receiver.port()
      expect(await notify(port, 'argocd-sync-healthy')).toBe(202)
      await receiver.until(/^Recorded change /)
      // The same repository's path, on the GitLab server.
      const onGitLab = fresh('argocd-sync-failed')
        .toString()
        .replace('https://github.com/acme/shop-deploy.git', `${gitlab.url}acme/shop-deploy.git`)
      expect(await notify(port, 'argocd-sync-failed', Buffer.from(onGitLab))).toBe(202)
      await receiver.until(/^Recorded change /, 2)

      const [healthy, failed] = [...emulator.changes.values()]
      expect(healthy.labels).toBe(
        'outcome:success,risk:migration,risk:infrastructure,issue:SHOP-12'
      )
      const shipped = JSON.parse(healthy.custom_metadata).argocd
      expect(shipped).toMatchObject({
        previous_sha: '5b8c6fb6f598dd77740de8792ca22640e4430078',
        compare_url:
          'https://github.com/acme/shop-deploy/compare/5b8c6fb6f598dd77740de8792ca22640e4430078...f1eb0a49d4b51073a1d34d13d0a71450527ace27',
        commit_count: 3,
        pull_requests: [
          {
            number: 41,
            title: 'SHOP-12: Add the orders table',
            url: 'https://github.com/acme/shop-deploy/pull/41'
          }
        ],
        risk: {
          migration: ['db/migrate/20250310_create_orders.rb'],
          infrastructure: ['overlays/production/kustomization.yaml']
        },
        risk_complete: true,
        issues: ['SHOP-12'],
        closes: ['#7']
      })
      expect(shipped.commits.map((commit: { message: string }) => commit.message)).toEqual([
        'SHOP-12: Add the orders table (#41)',
        'Fix the cart total',
        'Deploy shop-web 1.42.0'
      ])
      expect(github.requests.map(request => request.headers.authorization)).toEqual([
        `Bearer ${SHOP_TOKEN}`
      ])

      // GitLab's token goes to GitLab's API only; its refusal is one warning, and the change is kept.
      expect(gitlabAsked).toEqual([
        {
          path: `/api/v4/projects/acme%2Fshop-deploy/repository/compare?from=f1eb0a49d4b51073a1d34d13d0a71450527ace27&to=c98ff11e5749abffbafa27dee3f088f539513070`,
          token: gitlabToken
        }
      ])
      expect(JSON.parse(failed.custom_metadata).argocd.commits_complete).toBe(false)
      expect(receiver.lines.filter(line => line.startsWith('warn: '))).toEqual([
        'warn: argocd argocd/shop: Could not look up everything this change ships: GET /projects/acme%2Fshop-deploy/repository/compare answered HTTP 401 ("401 Unauthorized: *** has expired"): the token was not accepted: check GITLAB_TOKEN. The change is recorded without the commits it ships.'
      ])
      receiver.child.kill('SIGTERM')
      expect(await receiver.exited).toBe(0)
      const state = readdirSync(join(dir, 'state')).map(name =>
        readFileSync(join(dir, 'state', name), 'utf8')
      )
      expect(state.join('')).toContain('acme/shop-deploy')
      for (const text of [...receiver.lines, ...state]) {
        expect(text).not.toContain(SHOP_TOKEN)
        expect(text).not.toContain(gitlabToken)
      }
    } finally {
      await github.close()
      await gitlab.close()
    }
  })
})

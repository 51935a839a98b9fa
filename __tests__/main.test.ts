/**
 * The action's door (src/main.ts), in process against the emulator: the main step's run
 * (settings -> command -> report, or at job-end the key check and the saved start) and the post
 * step's. The failure policy's cells as this door applies them: action/policy.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ACTION_NAME, ACTION_VERSION } from '../src/package.ts'
import { readJobEndState } from '../src/action/post-state.ts'
import { run, runPost } from '../src/main.ts'
import type { Emulator } from '../emulator/emulator.ts'
import { useEmulator } from './support/use-emulator.ts'
import { FakeRunner } from './support/fake-runner.ts'
import { jwtWith } from './support/jwt.ts'
import { runnerContext } from './support/run-action.ts'
import { gitEnv, TestRepository } from './support/git-repository.ts'
import { renderSummary } from './support/summary.ts'

const PUSH_ENV: Record<string, string> = { ...runnerContext(tmpdir()), GITHUB_EVENT_NAME: 'push' }

let emulator: Emulator
useEmulator(started => {
  emulator = started
})

function runner(inputs: Record<string, string> = {}): FakeRunner {
  return new FakeRunner({
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '1',
    'timeout-seconds': '5',
    'include-commits': 'false',
    ...inputs
  })
}

function lastBody(route: string): Record<string, unknown> {
  const requests = emulator.requestsTo(route)
  return JSON.parse(requests[requests.length - 1].body) as Record<string, unknown>
}

describe('command: change', () => {
  it('records a change with the defaults from the Git context', async () => {
    const r = runner()
    await run(r, PUSH_ENV)

    expect(r.failures).toEqual([])
    const body = lastBody('POST /v2/change')
    expect(body['service']).toBe('octo-org/octo-repo')
    expect(body['version']).toBe(PUSH_ENV.GITHUB_SHA)
    expect(body['user']).toBe('octocat')
    expect(body).not.toHaveProperty('environment')
    expect(body).not.toHaveProperty('created_at')
    expect(String(body['description'])).toContain('a1b2c3d')
    const metadata = JSON.parse(String(body['custom_metadata'])) as {
      github: Record<string, unknown>
    }
    expect(metadata.github).toMatchObject({
      repository: 'octo-org/octo-repo',
      run_id: '9876543210',
      run_url: 'https://github.com/octo-org/octo-repo/actions/runs/9876543210/attempts/1'
    })

    const changeId = r.outputs['change-id']
    expect(emulator.changes.has(changeId)).toBe(true)
    expect(r.notices.join('\n')).toContain(changeId)
    expect(r.summary).toContain(`| Id | ${changeId} |`)
    expect(r.summary).toContain('octo-org/octo-repo')
  })

  it('sends the key only in X-Service-ApiKey, JSON with its content type, and a named User-Agent', async () => {
    await run(runner(), PUSH_ENV)
    const [request] = emulator.requestsTo('POST /v2/change')
    expect(request.headers['x-service-apikey']).toBe(emulator.apiKey)
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers['user-agent']).toBe(`${ACTION_NAME}/${ACTION_VERSION}`)
    const elsewhere = { ...request.headers, 'x-service-apikey': undefined }
    expect(
      JSON.stringify(elsewhere) + request.rawPath + request.query + request.body
    ).not.toContain(emulator.apiKey)
  })

  it('uses the pull request head SHA, not the merge commit', async () => {
    const r = runner()
    const payload = { pull_request: { number: 7, title: 'Fix', head: { sha: 'f'.repeat(40) } } }
    const eventPath = join(mkdtempSync(join(tmpdir(), 'cta-main-')), 'event.json')
    writeFileSync(eventPath, JSON.stringify(payload))
    await run(r, { ...PUSH_ENV, GITHUB_EVENT_NAME: 'pull_request', GITHUB_EVENT_PATH: eventPath })
    expect(lastBody('POST /v2/change')['version']).toBe('f'.repeat(40))
  })

  it('sets change-id even when the heartbeat then fails', async () => {
    const r = runner({ 'heartbeat-id': 'no-such-monitor' })
    await run(r, PUSH_ENV)
    expect(r.outputs['change-id']).toBeTruthy()
    expect(r.failures[0]).toContain('POST /v1/heartbeat/no-such-monitor')
    expect(r.failures[0]).toContain('404')
    expect(r.summary).toContain(
      '## Change recorded; heartbeat not sent&#58; the service rejected the request'
    )
  })
})

describe('the job’s environment, from its OIDC token', () => {
  const TOKEN = jwtWith({ environment: 'production', sub: 'repo:octo-org/octo-repo' })
  /** A job with `id-token: write`: the runner sets the token's address. */
  const OIDC_ENV = {
    ...PUSH_ENV,
    ACTIONS_ID_TOKEN_REQUEST_URL: 'https://token.actions.example/?api-version=2.0',
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'request-token'
  }
  function tokenRunner(inputs: Record<string, string> = {}): FakeRunner {
    const r = runner(inputs)
    r.idToken = async () => TOKEN
    return r
  }

  it('is the change’s environment, said once, with the token masked and nowhere else', async () => {
    const r = tokenRunner()
    await run(r, OIDC_ENV)
    expect(r.failures).toEqual([])
    expect(r.tokenRequests).toEqual([
      {
        url: OIDC_ENV.ACTIONS_ID_TOKEN_REQUEST_URL,
        requestToken: OIDC_ENV.ACTIONS_ID_TOKEN_REQUEST_TOKEN,
        audience: ACTION_NAME
      }
    ])
    expect(lastBody('POST /v2/change')['environment']).toBe('production')
    expect(r.lines.filter(line => line.includes('OIDC'))).toEqual([
      'Environment "production" from the job\'s OIDC token (its environment claim).'
    ])
    expect(r.secrets).toContain(TOKEN)
    expect(r.everything()).not.toContain(TOKEN)
    expect(JSON.stringify(r.states)).not.toContain(TOKEN)
    expect(JSON.stringify(emulator.requests)).not.toContain(TOKEN)
  })

  it.each(['ACTIONS_ID_TOKEN_REQUEST_URL', 'ACTIONS_ID_TOKEN_REQUEST_TOKEN'])(
    'is not asked for when the job may not have a token (no %s)',
    async name => {
      const r = tokenRunner()
      await run(r, { ...OIDC_ENV, [name]: '' })
      expect(r.tokenRequests).toEqual([])
      expect(lastBody('POST /v2/change')).not.toHaveProperty('environment')
    }
  )

  it('is not asked for when the environment input is given, which wins', async () => {
    const r = tokenRunner({ environment: 'staging' })
    await run(r, OIDC_ENV)
    expect(r.tokenRequests).toEqual([])
    expect(lastBody('POST /v2/change')['environment']).toBe('staging')
  })

  it('is not asked for when the deployment event names an environment', async () => {
    const r = tokenRunner()
    const payload = { deployment: { environment: 'canary', sha: 'd'.repeat(40) } }
    const eventPath = join(mkdtempSync(join(tmpdir(), 'cta-main-')), 'event.json')
    writeFileSync(eventPath, JSON.stringify(payload))
    await run(r, { ...OIDC_ENV, GITHUB_EVENT_NAME: 'deployment', GITHUB_EVENT_PATH: eventPath })
    expect(r.tokenRequests).toEqual([])
    expect(lastBody('POST /v2/change')['environment']).toBe('canary')
  })

  it('is not asked for by a command that records no change', async () => {
    emulator.addHeartbeatMonitor('hb')
    const r = tokenRunner({ command: 'heartbeat', 'heartbeat-id': 'hb' })
    await run(r, OIDC_ENV)
    expect(r.failures).toEqual([])
    expect(r.tokenRequests).toEqual([])
  })

  it('is left out, with one debug line and nothing else, when no token can be had', async () => {
    const r = runner()
    r.idToken = async () => {
      throw new Error('Failed to get ID Token: 403')
    }
    await run(r, OIDC_ENV)
    expect(r.failures).toEqual([])
    expect(r.warnings).toEqual([])
    expect(r.debugs).toEqual([
      "No environment from the job's OIDC token: Failed to get ID Token: 403"
    ])
    expect(r.lines.join('\n')).not.toContain('OIDC')
    expect(lastBody('POST /v2/change')).not.toHaveProperty('environment')
  })

  it('at job-end is read by the main step and recorded by the post step, which asks for none', async () => {
    const main = tokenRunner({ 'record-at': 'job-end' })
    await run(main, OIDC_ENV)
    expect(main.failures).toEqual([])
    expect(main.tokenRequests).toHaveLength(1)
    expect(main.states['jobEnd']).not.toContain(TOKEN)
    const jobEnd = readJobEndState({ STATE_jobEnd: main.states['jobEnd'] })
    expect(jobEnd?.environment).toBe('production')

    const post = tokenRunner({ 'record-at': 'job-end' })
    await runPost(jobEnd ?? {}, post, OIDC_ENV)
    expect(post.failures).toEqual([])
    expect(post.tokenRequests).toEqual([])
    expect(lastBody('POST /v2/change')['environment']).toBe('production')
  })

  it('is carried to the post step when the key check fails at the main step', async () => {
    emulator.inject('GET /v2/hello', { status: 503, body: 'down' }, Infinity)
    const main = tokenRunner({ 'record-at': 'job-end' })
    await run(main, OIDC_ENV)
    expect(readJobEndState({ STATE_jobEnd: main.states['jobEnd'] })?.environment).toBe('production')
  })
})

describe('command: heartbeat', () => {
  it('sends only the heartbeat, to the encoded monitor id', async () => {
    emulator.addHeartbeatMonitor('a/../b c')
    const r = runner({ command: 'heartbeat', 'heartbeat-id': 'a/../b c' })
    await run(r, PUSH_ENV)
    expect(r.failures).toEqual([])
    expect(emulator.requests.map(q => q.rawPath)).toEqual(['/v1/heartbeat/a%2F..%2Fb%20c'])
    expect(emulator.requests[0].body).toBe('')
    expect(r.outputs['heartbeat-signal-id']).toBe(emulator.heartbeats.get('a/../b c')?.[0])
  })

  it('requires heartbeat-id, and sends nothing without it', async () => {
    const r = runner({ command: 'heartbeat' })
    await run(r, PUSH_ENV)
    expect(r.failures[0]).toContain('heartbeat-id')
    expect(emulator.requests).toEqual([])
  })
})

describe('validation first', () => {
  it.each([
    ['command', 'deploy'],
    ['created-at', 'yesterday'],
    ['custom-metadata', '{"a":'],
    ['timeout-seconds', '301'],
    ['max-attempts', '0'],
    ['dry-run', 'yes'],
    ['base-url', 'http://localhost:1/'],
    ['services', 'api: services/[api/**'],
    ['risk-paths', 'schema: db/[abc/**'],
    ['issue-keys', 'ENG-1'],
    ['auto-labels', 'yes']
  ])('rejects %s=%j before any request', async (input, value) => {
    const r = runner({ [input]: value })
    await run(r, PUSH_ENV)
    expect(r.failures).toHaveLength(1)
    expect(r.failures[0]).toContain(`"${input}"`)
    expect(emulator.requests).toEqual([])
  })

  it('fails on an empty api-key, and masks the key first otherwise', async () => {
    const empty = runner({ 'api-key': '' })
    await run(empty, PUSH_ENV)
    expect(empty.failures[0]).toContain('api-key')

    const given = runner()
    await run(given, PUSH_ENV)
    expect(given.secrets).toEqual([emulator.apiKey])
  })
})

describe('dry-run', () => {
  it('prints each request with the key as *** and sends nothing', async () => {
    const r = runner({ 'dry-run': 'true', 'heartbeat-id': 'hb-1', labels: 'a, b' })
    await run(r, PUSH_ENV)
    expect(emulator.requests).toEqual([])
    expect(r.failures).toEqual([])
    const printed = r.lines.join('\n')
    expect(printed).toContain(`[dry-run] POST ${emulator.url}v2/change`)
    expect(printed).toContain(`[dry-run] POST ${emulator.url}v1/heartbeat/hb-1`)
    expect(printed).toContain('X-Service-ApiKey: ***')
    expect(printed).toContain('"labels":"a,b"')
    expect(r.everything()).not.toContain(emulator.apiKey)
    expect(r.outputs['change-id']).toBeUndefined()
    expect(r.outputs['heartbeat-signal-id']).toBeUndefined()
    expect(r.summary).toContain('## Change not sent')
    expect(r.summary).toContain('### Heartbeat \\(not sent\\)')
    expect(r.lines[r.lines.length - 1]).toBe('Dry run: nothing was sent.')
  })
})

describe('job-summary', () => {
  it('writes no summary when it is false, even if another input is invalid', async () => {
    const r = runner({ 'job-summary': 'false', 'timeout-seconds': 'soon' })
    await run(r, PUSH_ENV)
    expect(r.failures[0]).toContain('timeout-seconds')
    expect(r.summary).toBe('')
  })
})

describe('the main step of a job-end run', () => {
  const JOB_END = { 'record-at': 'job-end' }

  it('checks the key, saves its start and records nothing', async () => {
    const before = Date.now()
    const r = runner(JOB_END)
    await run(r, PUSH_ENV)
    expect(emulator.requests.map(q => `${q.method} ${q.rawPath}`)).toEqual(['GET /v2/hello'])
    const { startedAt } = JSON.parse(r.states['jobEnd']) as { startedAt: number }
    expect(startedAt).toBeGreaterThanOrEqual(before)
    expect(Object.keys(JSON.parse(r.states['jobEnd']) as object)).toEqual(['startedAt'])
    expect(r.lines).toContain(
      'The change will be recorded when the job ends, with how the deploy ended (record-at: job-end).'
    )
    expect(r.outputs['change-id']).toBeUndefined()
    expect(r.failures).toEqual([])
  })

  it('says what a heartbeat run will do', async () => {
    const r = runner({ ...JOB_END, command: 'heartbeat', 'heartbeat-id': 'nightly' })
    await run(r, PUSH_ENV)
    expect(r.lines).toContain(
      'The heartbeat will be sent when the job ends, if it succeeds (record-at: job-end).'
    )
  })

  it('in a dry run, sends nothing and still saves its start for the post step', async () => {
    const r = runner({ ...JOB_END, 'dry-run': 'true' })
    await run(r, PUSH_ENV)
    expect(emulator.requests).toHaveLength(0)
    expect(r.states['jobEnd']).toBeDefined()
    expect(r.lines).toContain('Dry run: nothing was sent.')
  })

  it('under fail-on-error false with an invalid input, lets the post step say once, at the job’s end, that the deploy was not recorded and why', async () => {
    const inputs = { ...JOB_END, 'fail-on-error': 'false', 'max-attempts': '11' }
    const main = runner(inputs)
    await run(main, PUSH_ENV)
    expect(main.warnings).toEqual([
      expect.stringMatching(/max-attempts.*it will not be recorded \(fail-on-error: false\)\.$/)
    ])
    const jobEnd = readJobEndState({ STATE_jobEnd: main.states['jobEnd'] })
    expect(jobEnd).toBeDefined()
    const post = runner(inputs)
    await runPost(jobEnd ?? {}, post, PUSH_ENV)
    expect(post.warnings).toEqual([
      'The deploy was not recorded: Input "max-attempts" must be a whole number from 1 to 10; got "11". (Not failing the step: fail-on-error is false.)'
    ])
    expect(post.failures).toEqual([])
    expect(emulator.requests).toHaveLength(0)
  })
})

describe('the main step of a run that records at once', () => {
  it('saves only that a post step is one, which then has nothing to do', async () => {
    const r = runner({ 'record-at': 'now' })
    await run(r, PUSH_ENV)
    expect(r.failures).toEqual([])
    expect(emulator.changes.size).toBe(1)
    expect(r.states).toEqual({ isPost: 'true' })
  })
})

describe('the cancellation listeners', () => {
  it('are removed when a run ends, whatever it ended with', async () => {
    const before = ['SIGINT', 'SIGTERM', 'SIGHUP'].map(signal => process.listenerCount(signal))
    await run(runner(), PUSH_ENV)
    await run(runner({ 'timeout-seconds': 'soon' }), PUSH_ENV)
    expect(['SIGINT', 'SIGTERM', 'SIGHUP'].map(signal => process.listenerCount(signal))).toEqual(
      before
    )
  })
})

describe('include-commits: git, from the runner’s checkout', () => {
  const HOSTILE_PATH = 'hostile/\u0007bell\n::error::line\u2028[x](evil.example).txt'
  const HOSTILE =
    'Fix ::error::x\u2028::warning::y\u0007 [x](https://evil.example) <b>b</b>\u001b[31m'
  let root: string
  let repo: TestRepository
  let first: string
  let head: string
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'cta-main-git-')))
    repo = new TestRepository(join(root, 'shop'), gitEnv(root))
    first = repo.commit('Initial commit', { 'README.md': '# Shop\n' })
    repo.commit('Add the orders table (#7)', { 'db/migrations/002_orders.sql': 'create;\n' })
    head = repo.commit(`${HOSTILE}\n\n::set-output name=x::y`, { [HOSTILE_PATH]: 'x\n' }, HOSTILE)
    // As actions/checkout leaves it, without its token.
    repo.git(['remote', 'add', 'origin', 'https://github.com/octo-org/octo-repo'])
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('records what shipped under github, with source git, and no GitHub API call', async () => {
    const r = runner({
      'include-commits': 'git',
      'previous-version': first,
      'risk-paths': 'migration: db/migrations/**\nhostile: hostile/**'
    })
    const env = { ...PUSH_ENV, ...gitEnv(root), GITHUB_WORKSPACE: repo.path, GITHUB_SHA: head }
    await run(r, env)
    expect(r.failures).toEqual([])
    expect(r.warnings).toEqual([])
    const body = lastBody('POST /v2/change')
    const { github } = JSON.parse(String(body['custom_metadata'])) as Record<
      string,
      Record<string, unknown>
    >
    expect(github).toMatchObject({
      repository: 'octo-org/octo-repo',
      source: 'git',
      previous_sha: first,
      commit_count: 2,
      compare_url: `https://github.com/octo-org/octo-repo/compare/${first}...${head}`,
      // Paths reach the service exactly as git gives them, as JSON data.
      risk: { migration: ['db/migrations/002_orders.sql'], hostile: [HOSTILE_PATH] }
    })
    expect(body['labels']).toContain('risk:migration')
    expect(r.lines.join('\n')).toContain('(from input), 2 commits')

    // Hostile history stays inert in every output: the log, the outputs and the summary.
    const said = [r.lines, r.notices, r.warnings, r.debugs, Object.values(r.outputs)].flat()
    for (const line of said) {
      expect(line).not.toMatch(/[^\P{Cc}\n]|[\u2028\u2029]/u)
      expect(line.split('\n').some(part => part.trimStart().startsWith('::'))).toBe(false)
    }
    const { links, html } = renderSummary(r.summary)
    expect(links.map(link => link.href).filter(href => href.includes('evil'))).toEqual([])
    expect(html).not.toContain('<b>b</b>')
    expect(r.summary).not.toMatch(/[^\P{Cc}\n]|[\u2028\u2029]/u)
  })
})

describe('the post step of a job-end run', () => {
  it('records a start it cannot read as no start: the outcome alone, and one warning', async () => {
    const r = runner({ 'record-at': 'job-end', 'job-status': 'failure' })
    await runPost(readJobEndState({ STATE_jobEnd: 'not json' }) ?? {}, r, PUSH_ENV)
    expect(r.failures).toEqual([])
    expect(r.warnings).toEqual([
      'The deploy is recorded without its start or duration: the start the main step saved cannot be read.'
    ])
    expect(lastBody('POST /v2/change')).not.toHaveProperty('created_at')
  })
})

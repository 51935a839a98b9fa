/**
 * The bundled action, built from the current sources, as the runner runs it against the emulator
 * over HTTPS: commands `change` and `heartbeat`, the failure policy in its three modes, a proxy,
 * and redaction. What the lower tests prove (retries, deadlines, redirects, inputs, dry run) is
 * not repeated here as processes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { SETTING_DEFAULTS, type InputName } from '../../src/settings.ts'
import { startConnectProxy } from '../support/connect-proxy.ts'
import { actionAgainst } from '../support/run-action.ts'
import { TEST_SERVICE_HOST, testCertificate } from '../../emulator/tls.ts'

let emulator: Emulator
let certPath: string
let action: ReturnType<typeof actionAgainst>

beforeAll(async () => {
  certPath = (await testCertificate()).certPath
  emulator = await Emulator.start()
  action = actionAgainst(emulator, certPath)
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(() => emulator.reset())

const PUSH_PAYLOAD = {
  ref: 'refs/heads/main',
  before: '0'.repeat(40),
  after: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
  repository: { full_name: 'octo-org/octo-repo', default_branch: 'main' },
  pusher: { name: 'octocat' },
  head_commit: { id: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', message: 'Ship it' }
}

describe('command: change', () => {
  it('records a change from the push context, then its heartbeat', async () => {
    emulator.addHeartbeatMonitor('deploys')
    const result = await action({ 'heartbeat-id': 'deploys' }, { payload: PUSH_PAYLOAD })

    expect(result.stderr).toBe('')
    expect(result.exitCode).toBe(0)
    const changeId = result.outputs['change-id']
    const stored = emulator.changes.get(changeId)
    expect(stored).toMatchObject({
      service: 'octo-org/octo-repo',
      version: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
      user: 'octocat'
    })
    expect(String(stored?.['description'])).toMatch(/a1b2c3d.*main|main.*a1b2c3d/)
    expect(JSON.parse(String(stored?.['custom_metadata']))).toMatchObject({
      github: { event_name: 'push', run_number: '42', actor: 'octocat' }
    })
    expect(result.stdout).toContain(`::notice::Recorded change ${changeId}`)
    expect(result.stdout).toContain('::add-mask::')
    expect(result.summary).toContain(`| Id | ${changeId} |`)
    expect(result.outputs['error']).toBeUndefined()
    expect(emulator.heartbeats.get('deploys')).toEqual([result.outputs['heartbeat-signal-id']])
  })
})

describe('an input given empty, as a reusable workflow passes one its caller left out', () => {
  /** What a run sent and wrote, with the change's id (new at each run) made one. */
  async function seen(inputs: Record<string, string>) {
    emulator.reset()
    const run = await action(inputs, { payload: PUSH_PAYLOAD })
    const id = run.outputs['change-id']
    const same = (text: string): string => text.replaceAll(id, 'ID')
    return {
      exitCode: run.exitCode,
      stdout: same(run.stdout),
      outputs: same(JSON.stringify(run.outputs)),
      summary: same(run.summary),
      requests: emulator.requests.map(r => `${r.method} ${r.rawPath} ${r.body}`)
    }
  }

  it('means its default, for each input whose default is a plain value: the same request, log, outputs and summary', async () => {
    // As the runner gives them when not given (this suite's own defaults aside), and given empty.
    const names = Object.keys(SETTING_DEFAULTS) as InputName[]
    const expected = await seen(
      Object.fromEntries(names.map(name => [name, SETTING_DEFAULTS[name]!]))
    )
    expect(await seen(Object.fromEntries(names.map(name => [name, ''])))).toEqual(expected)
    expect(expected.exitCode).toBe(0)
  })
})

describe('command: heartbeat', () => {
  it('sends a heartbeat alone with command: heartbeat', async () => {
    emulator.addHeartbeatMonitor('nightly')
    const result = await action({ command: 'heartbeat', 'heartbeat-id': 'nightly' })
    expect(result.exitCode).toBe(0)
    expect(emulator.requests.map(q => `${q.method} ${q.rawPath}`)).toEqual([
      'POST /v1/heartbeat/nightly'
    ])
    expect(result.outputs['change-id']).toBeUndefined()
  })
})

describe('the failure policy', () => {
  it('keeps a good deploy green during an outage under fail-on-error: auto', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'maintenance' }, Infinity)
    const result = await action({ 'max-attempts': '1' })
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toMatch(/::warning::POST \/v2\/change.*503/)
    expect(result.outputs['error']).toContain('503')
  })

  it('fails on an outage with fail-on-error: true', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'maintenance' }, Infinity)
    const result = await action({ 'max-attempts': '1', 'fail-on-error': 'true' })
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/::error::POST \/v2\/change.*503/)
  })

  it('never fails with fail-on-error: false, even on a rejected key', async () => {
    const result = await action({ 'fail-on-error': 'false', 'api-key': 'wrong-key-123' })
    expect(result.exitCode).toBe(0)
    expect(result.outputs['error']).toContain('401')
  })
})

describe('redaction', () => {
  it('never shows the key, even when the service echoes it and debug logging is on', async () => {
    emulator.inject('POST /v2/change', {
      status: 400,
      body: JSON.stringify({ error: `key ${emulator.apiKey} is not allowed here` })
    })
    const result = await action({}, { env: { RUNNER_DEBUG: '1', ACTIONS_STEP_DEBUG: 'true' } })
    expect(result.exitCode).toBe(1)
    const seen = result.stdout.replace(`::add-mask::${emulator.apiKey}`, '')
    expect(seen).toContain('key *** is not allowed here')
    expect(seen + result.stderr + result.summary + JSON.stringify(result.outputs)).not.toContain(
      emulator.apiKey
    )
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
})

describe('an output file that cannot be written (a full disk)', () => {
  it('still records the change and its summary; under fail-on-error false it only warns', async () => {
    const result = await action(
      { 'fail-on-error': 'false' },
      { payload: PUSH_PAYLOAD, env: { GITHUB_OUTPUT: '/dev/full' } }
    )
    expect(result.exitCode).toBe(0)
    expect(emulator.changes.size).toBe(1)
    expect(result.stdout).toMatch(/::warning::The change-id output could not be written: .*ENOSPC/)
    expect(result.summary).toContain('| Service | octo-org/octo-repo |')
  })

  it('fails the step under auto, after recording the change', async () => {
    const result = await action({}, { payload: PUSH_PAYLOAD, env: { GITHUB_OUTPUT: '/dev/full' } })
    expect(result.exitCode).toBe(1)
    expect(emulator.changes.size).toBe(1)
    expect(result.stdout).toMatch(/::error::The change-id output could not be written/)
  })
})

/**
 * The bundled action, built from the current sources, as the runner runs it against the emulator
 * over HTTPS: command `change` and its heartbeat through a proxy, redaction with debug logging on,
 * and an output file the runner cannot write. What the lower tests prove (retries, deadlines,
 * redirects, inputs given empty, the heartbeat alone, the failure policy's every cell, dry run)
 * is not repeated here as processes; one case per column of the policy runs the bundle in
 * e2e/job-end.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
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
  it('records a change from the push context, then its heartbeat, through HTTPS_PROXY with a CONNECT tunnel', async () => {
    emulator.addHeartbeatMonitor('deploys')
    // A host that does not resolve: only a request that went through the proxy reaches the service.
    const service = `${TEST_SERVICE_HOST}:${emulator.port}`
    const proxy = await startConnectProxy({
      route: () => ({ host: '127.0.0.1', port: emulator.port })
    })
    const result = await action(
      { 'heartbeat-id': 'deploys', 'base-url': `https://${service}/` },
      { payload: PUSH_PAYLOAD, env: { HTTPS_PROXY: proxy.url } }
    ).finally(() => proxy.close())
    expect([...new Set(proxy.connects)]).toEqual([service])

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

describe('an output file that cannot be written (a full disk)', () => {
  // Under auto the step fails: main.test.ts (when reporting itself fails), in process.
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
})

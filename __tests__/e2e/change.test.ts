/**
 * The bundled action (dist/index.js) as the runner runs it, against the emulator over HTTPS:
 * commands `change` and `heartbeat`, dry-run, the failure policy and redaction.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { actionAgainst } from '../support/run-action.ts'
import { testCertificate } from '../../emulator/tls.ts'

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

describe('bundled action: change', () => {
  it('records a change from the push context with only a key and an address', async () => {
    const result = await action({}, { payload: PUSH_PAYLOAD })

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
  })

  it('records the change and the heartbeat, with both ids as outputs', async () => {
    emulator.addHeartbeatMonitor('deploys')
    const result = await action({ 'heartbeat-id': 'deploys' })
    expect(result.exitCode).toBe(0)
    expect(emulator.heartbeats.get('deploys')).toEqual([result.outputs['heartbeat-signal-id']])
    expect(emulator.changes.has(result.outputs['change-id'])).toBe(true)
    expect(result.summary).toContain('Heartbeat received')
  })

  it('sends a heartbeat alone with command: heartbeat', async () => {
    emulator.addHeartbeatMonitor('nightly')
    const result = await action({ command: 'heartbeat', 'heartbeat-id': 'nightly' })
    expect(result.exitCode).toBe(0)
    expect(emulator.requests.map(q => `${q.method} ${q.rawPath}`)).toEqual([
      'POST /v1/heartbeat/nightly'
    ])
    expect(result.outputs['change-id']).toBeUndefined()
  })

  it('prints the requests and sends nothing on dry-run', async () => {
    const result = await action({ 'dry-run': 'true' })
    expect(result.exitCode).toBe(0)
    expect(emulator.requests).toEqual([])
    expect(result.stdout).toContain(`[dry-run] POST ${emulator.url}v2/change`)
    expect(result.stdout).toContain('X-Service-ApiKey: ***')
    expect(result.stdout.replace(`::add-mask::${emulator.apiKey}`, '')).not.toContain(
      emulator.apiKey
    )
  })

  it('fails the step on a rejected key and says so', async () => {
    const result = await action({ 'api-key': 'wrong-key-123' })
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/::error::POST \/v2\/change.*401/)
    expect(result.stdout).toContain('api-key')
  })

  it('fails on bad input before sending anything', async () => {
    const result = await action({ 'timeout-seconds': 'forever' })
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toContain('timeout-seconds')
    expect(emulator.requests).toEqual([])
  })

  it('keeps a good deploy green during an outage under fail-on-error: auto', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'maintenance' }, Infinity)
    const result = await action({ 'max-attempts': '1' })
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toMatch(/::warning::POST \/v2\/change.*503/)
    expect(result.outputs['error']).toContain('503')
  })

  it('fails on an outage with fail-on-error: true, and never with false', async () => {
    emulator.inject('POST /v2/change', { status: 503, body: 'maintenance' }, Infinity)
    const strict = await action({ 'max-attempts': '1', 'fail-on-error': 'true' })
    expect(strict.exitCode).toBe(1)
    emulator.reset()
    const lenient = await action({ 'fail-on-error': 'false', 'api-key': 'wrong-key-123' })
    expect(lenient.exitCode).toBe(0)
    expect(lenient.outputs['error']).toContain('401')
  })

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

  it('delivers a 20 KB unicode description and deeply nested metadata byte for byte', async () => {
    const unit = 'Déploiement 🚀 发布 — עברית ✓ '
    const description = unit
      .repeat(Math.ceil(20_000 / unit.length))
      .slice(0, 20_000)
      .trim()
    let nested: unknown = { leaf: ['ü', 1.5, null, true, '🚀'] }
    for (let depth = 0; depth < 200; depth++) nested = { [`level${depth}`]: nested }
    const nestedJson = JSON.stringify(nested)
    const result = await action({
      description,
      'custom-metadata': JSON.stringify({ deploy: nested })
    })
    expect(result.exitCode).toBe(0)
    const stored = emulator.changes.get(result.outputs['change-id'])
    expect(stored?.['description']).toBe(description)
    expect(Buffer.from(String(stored?.['description']))).toEqual(Buffer.from(description))
    const metadata = String(stored?.['custom_metadata'])
    expect(metadata).toContain(`"deploy":${nestedJson}`)
    expect(JSON.parse(metadata)).toMatchObject({ deploy: nested, github: { actor: 'octocat' } })
  })
})

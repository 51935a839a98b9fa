/**
 * The receiver's seam to the core: against the emulator, a deploy's change as every door builds
 * it, what it shipped read once from the fake GitHub API, sent once, and what each answer means
 * (sent, wait, or drop); over a real state folder, with the service's answers given in turn, the
 * sender's order, backoff and its bounds, the rejected key said once, and what is dropped and
 * counted.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Emulator } from '../../emulator/emulator.ts'
import { FakeGitHub, GitHubFaults } from '../../emulator/github.ts'
import { trustTestCertificate } from '../../emulator/tls.ts'
import { ServiceError } from '../../src/errors.ts'
import { hasUnsafeCharacter } from '../../src/helpers/text.ts'
import { Redactor } from '../../src/redact.ts'
import type { DeployChange } from '../../src/serve/deploys.ts'
import {
  readNotification,
  type Controller,
  type Notification
} from '../../src/serve/notifications.ts'
import {
  failedAttempt,
  sendWaiting,
  serviceRecorder,
  type SendAttempt,
  type Recorder
} from '../../src/serve/record.ts'
import { Metrics } from '../../src/serve/server.ts'
import { StateFolder } from '../../src/serve/state.ts'
import type { ConfiguredForge } from '../../src/shipped/forge-lookup.ts'
import { closedPort, startLoopback } from '../support/loopback.ts'
import { useEmulator } from '../support/use-emulator.ts'
import { SHOP_REPOSITORY, SHOP_TOKEN } from './fixtures/shop-repository.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})
let github: FakeGitHub
beforeAll(async () => {
  const cert = await trustTestCertificate()
  github = await FakeGitHub.start({ repository: SHOP_REPOSITORY, token: SHOP_TOKEN, cert })
})
beforeEach(() => github.reset())
afterAll(() => github.close())

/** github.com's repositories, read through the fake API. */
const GITHUB = (): ConfiguredForge => ({
  forge: 'github',
  serverUrl: 'https://github.com',
  apiUrl: github.url,
  token: SHOP_TOKEN,
  advice: { tokenInput: 'GITHUB_TOKEN' }
})

const advice = {
  changeWait: 'wait',
  checkAddress: 'check the address',
  checkApiKey: 'check the key'
}
let recorders: Recorder[] = []
/** What the recorders logged. */
let logged: Array<[string, string]> = []
afterEach(() => {
  for (const recorder of recorders) recorder.close()
  recorders = []
  logged = []
})

function recorder(
  baseUrl = emulator.url,
  apiKey = emulator.apiKey,
  forges: ConfiguredForge[] = []
): Recorder {
  const made = serviceRecorder({
    baseUrl: new URL(baseUrl),
    apiKey,
    redactor: new Redactor(),
    advice,
    forges,
    log: (level, message) => logged.push([level, message])
  })
  recorders.push(made)
  return made
}

/** A Flux event's fields that a test may change. */
type FluxEvent = { message: string; metadata: Record<string, string> }

function changeOf(
  controller: Controller,
  name: string,
  edit?: (body: FluxEvent) => void
): DeployChange {
  const body = JSON.parse(readFileSync(`__tests__/fixtures/gitops/${name}.json`, 'utf8'))
  edit?.(body)
  const read = readNotification(controller, body)
  if (!('notification' in read)) throw new Error(`${name} is not a notification`)
  return { key: read.notification.deployKey, notification: read.notification }
}

const stored = () => [...emulator.changes.values()]

describe('a change sent', () => {
  it('is built as every door builds one, its metadata under the controller’s key', async () => {
    const recorded = await recorder().record(changeOf('argocd', 'argocd-sync-healthy'))
    expect(recorded).toEqual({ sent: stored()[0].id })
    const [change] = stored()
    expect(change).toMatchObject({
      service: 'shop',
      environment: 'production',
      version: 'f1eb0a49d4b51073a1d34d13d0a71450527ace27',
      user: 'alice@acme.example',
      created_at: Date.parse('2025-03-10T09:14:05Z') / 1000,
      labels: 'outcome:success'
    })
    const metadata = JSON.parse(change.custom_metadata)
    expect(metadata.argocd).toMatchObject({
      object: 'argocd/shop',
      status: 'Succeeded, Healthy',
      repository: 'https://github.com/acme/shop-deploy.git',
      previous_version: '5b8c6fb6f598dd77740de8792ca22640e4430078',
      project: 'storefront'
    })
    expect(metadata.deploy).toEqual({
      outcome: 'success',
      status: 'Succeeded, Healthy',
      started_at: '2025-03-10T09:14:05.000Z',
      finished_at: '2025-03-10T09:14:41.000Z',
      duration_seconds: 36
    })
    expect(metadata.artifact.digest).toBe(
      'sha256:69e6c73dfbe0ec61b69b9d1811addcc56136f0247fecae5725cf33610bb8e3d1'
    )
    expect(metadata.otel.attributes['deployment.environment.name']).toBe('production')
  })

  it('records a Flux rollback as one, with how it ended', async () => {
    const change = changeOf('flux', 'flux-helmrelease-rollback-succeeded')
    const rollback = {
      ...change,
      notification: { ...change.notification, previousVersion: '1.4.0' }
    }
    await recorder().record(rollback)
    const [sent] = stored()
    expect(sent.labels.split(',')).toEqual(['outcome:success', 'remediation:rollback'])
    expect(JSON.parse(sent.custom_metadata).remediation).toEqual({ type: 'rollback', of: '1.4.0' })
  })

  it('records a Flux rollback as one when no earlier version of its object was seen', async () => {
    await recorder().record(changeOf('flux', 'flux-helmrelease-rollback-succeeded'))
    const [sent] = stored()
    expect(sent.labels.split(',')).toEqual(['outcome:success', 'remediation:rollback'])
    expect(JSON.parse(sent.custom_metadata).remediation).toEqual({ type: 'rollback' })
  })

  it('carries no raw control character, whatever the notification held', async () => {
    const hostile = '\u001b[31m\r\n::error::x\u2028\u202e'
    await recorder().record(
      changeOf('flux', 'flux-kustomization-failed', body => {
        body.message = `failed ${hostile}`
        body.metadata.cluster = hostile
      })
    )
    const body = emulator.requestsTo('POST /v2/change')[0].body
    expect(hasUnsafeCharacter(body)).toBe(false)
  })
})

describe('what a deploy shipped', () => {
  const healthy = () => changeOf('argocd', 'argocd-sync-healthy')

  it('is read from its forge once, however many times its change is sent', async () => {
    emulator.inject('POST /v2/change', { status: 503 })
    const made = recorder(emulator.url, emulator.apiKey, [GITHUB()])
    expect(await made.record(healthy())).toMatchObject({ keyRejected: false })
    expect(await made.record(healthy())).toEqual({ sent: stored()[0].id })
    expect(github.requestsTo('GET /repos/*/*/compare/*')).toHaveLength(1)
    expect(JSON.parse(stored()[0].custom_metadata).argocd.commit_count).toBe(3)
  })

  it('that cannot be read is one warning, and the change is recorded saying so', async () => {
    github.inject('GET /repos/*/*/compare/*', GitHubFaults.badCredentials)
    await recorder(emulator.url, emulator.apiKey, [GITHUB()]).record(healthy())
    expect(logged).toEqual([
      [
        'warn',
        'argocd argocd/shop: Could not look up everything this change ships: GET /repos/acme/shop-deploy/compare/5b8c6fb6f598dd77740de8792ca22640e4430078...f1eb0a49d4b51073a1d34d13d0a71450527ace27 answered HTTP 401 ("Bad credentials"): the token was not accepted: check GITHUB_TOKEN. The change is recorded without the commits it ships.'
      ]
    ])
    const metadata = JSON.parse(stored()[0].custom_metadata).argocd
    expect(metadata).toMatchObject({ commits_complete: false, risk_complete: false })
    expect(metadata.commits).toBeUndefined()
  })
})

describe('an answer', () => {
  const change = () => changeOf('flux', 'flux-kustomization-succeeded')

  it.each([401, 403, 408, 429, 500, 503])('%i makes the change wait', async status => {
    emulator.inject('POST /v2/change', { status })
    const recorded = await recorder().record(change())
    expect(recorded).toMatchObject({ keyRejected: status === 401 || status === 403 })
    expect('wait' in recorded && recorded.wait).toContain(`HTTP ${status}`)
  })

  it('of a wrong key says the key was rejected', async () => {
    const recorded = await recorder(emulator.url, 'wrong-key').record(change())
    expect(recorded).toEqual({
      wait: expect.stringContaining('rejected the API key'),
      keyRejected: true
    })
  })

  it.each([400, 404, 413, 422])('%i drops the change with the service’s words', async status => {
    emulator.inject('POST /v2/change', { status, body: '{"error": "version is too long"}' })
    expect(await recorder().record(change())).toEqual({
      drop: expect.stringContaining('version is too long')
    })
  })

  it('of 2XX without an id drops the change: it may be stored, and is never sent twice', async () => {
    emulator.inject('POST /v2/change', { status: 201, body: '{}' })
    expect(await recorder().record(change())).toEqual({
      drop: expect.stringContaining('not with the documented answer')
    })
  })

  it('that never comes (nothing listens) makes the change wait', async () => {
    const address = `https://127.0.0.1:${await closedPort()}/`
    expect(await recorder(address).record(change())).toEqual({
      wait: expect.stringContaining('ECONNREFUSED'),
      keyRejected: false
    })
  })

  it('cut by close() makes the change wait for the next start', async () => {
    let arrived: () => void = () => {}
    const hung = new Promise<void>(resolve => {
      arrived = resolve
    })
    // Reads the request, never answers.
    const service = await startLoopback(() => arrived())
    try {
      const made = recorder(service.url)
      const pending = made.record(change())
      await hung
      made.close()
      expect(await pending).toMatchObject({ keyRejected: false })
    } finally {
      await service.close()
    }
  })

  it('other than the service’s (a bug) makes the change wait', () => {
    expect(failedAttempt(new Error('boom'))).toEqual({ wait: 'boom', keyRejected: false })
    const redirect = new ServiceError('moved', {
      call: 'POST /v2/change',
      kind: 'protocol',
      status: 302
    })
    expect(failedAttempt(redirect)).toEqual({ wait: 'moved', keyRejected: false })
  })
})

const DAY_MS = 24 * 60 * 60_000

function keyed(key: string): DeployChange {
  const notification = {
    controller: 'flux',
    deployKey: key,
    object: `Kustomization/apps/${key}`,
    service: key,
    outcome: 'success'
  } as Notification
  return { key, notification }
}

const sent = (id: string): SendAttempt => ({ sent: id })
const down: SendAttempt = { wait: 'POST /v2/change failed with HTTP 503.', keyRejected: false }
const rejectedKey: SendAttempt = { wait: 'The service rejected the API key.', keyRejected: true }

describe('the sender', () => {
  let dir: string
  let state: StateFolder
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cta-sender-'))
    // Each input is the changes it adds.
    state = await StateFolder.open(dir, (_, input) => ({
      changed: true,
      changes: input as DeployChange[]
    }))
  })
  afterEach(async () => {
    await state.close()
    rmSync(dir, { recursive: true, force: true })
  })

  /**
   * A sender whose service gives `answers` in turn, then stops it: the keys it was asked to
   * record, the waits it slept, what it logged and counted. `now` is the clock it reads.
   */
  async function sendAll(answers: SendAttempt[], now = 0) {
    const asked: string[] = []
    const slept: number[] = []
    const lines: Array<[string, string]> = []
    const metrics = new Metrics()
    const stopping = new AbortController()
    const sending = {
      state,
      log: (level: string, message: string) => lines.push([level, message]),
      metrics,
      record: async ({ key }: DeployChange) => {
        asked.push(key)
        const answer = answers.shift()!
        if (answers.length === 0) stopping.abort()
        return answer
      },
      policy: { clock: () => now, sleep: async (ms: number) => slept.push(ms) }
    }
    await sendWaiting(sending, stopping.signal)
    return { asked, slept, lines, metrics }
  }

  it('records the waiting changes in the order they were accepted, each once', async () => {
    await state.update([keyed('a'), keyed('b')], 0)
    await state.update([keyed('c')], 0)
    const { asked, lines, metrics } = await sendAll([sent('1'), sent('2'), sent('3')])
    expect(asked).toEqual(['a', 'b', 'c'])
    expect(state.waitingCount).toBe(0)
    expect(metrics.recorded).toBe(3)
    expect(lines[0]).toEqual(['info', 'Recorded change 1: flux Kustomization/apps/a (a, success).'])
  })

  it('keeps the oldest waiting while the service is down, backing off from 1 s to 5 min', async () => {
    await state.update([keyed('a'), keyed('b')], 0)
    const answers = [...new Array<SendAttempt>(12).fill(down), sent('1')]
    const { asked, slept, lines } = await sendAll(answers)
    expect(asked).toEqual([...new Array<string>(13).fill('a')])
    expect(slept).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map(s => s * 1000))
    expect(lines[0]).toEqual([
      'warn',
      'POST /v2/change failed with HTTP 503. 2 changes wait; the next attempt is in 1 s.'
    ])
    expect(state.waitingCount).toBe(1)
  })

  it('says a rejected key once, loudly, and drops nothing', async () => {
    await state.update([keyed('a')], 0)
    const { lines, metrics } = await sendAll([rejectedKey, rejectedKey, rejectedKey, sent('1')])
    expect(lines.filter(([level]) => level === 'error')).toEqual([
      [
        'error',
        'The service rejected the API key. Nothing is dropped: 1 change wait until the key is accepted.'
      ]
    ])
    expect(metrics.recorded).toBe(1)
    expect(metrics.dropped).toEqual({ refused: 0, expired: 0 })
  })

  it('drops a change the service refuses, with its words, and goes on', async () => {
    await state.update([keyed('a'), keyed('b')], 0)
    const refused = { drop: 'POST /v2/change was rejected with HTTP 400: version is too long.' }
    const { asked, lines, metrics } = await sendAll([refused, sent('2')])
    expect(asked).toEqual(['a', 'b'])
    expect(lines[0]).toEqual([
      'error',
      `Dropped the change of flux Kustomization/apps/a (a, success): ${refused.drop}`
    ])
    expect(metrics.dropped.refused).toBe(1)
    expect(state.waitingCount).toBe(0)
  })

  it('drops a change not recorded within a day of being accepted, unsent', async () => {
    await state.update([keyed('old')], 0)
    await state.update([keyed('new')], DAY_MS)
    const { asked, lines, metrics } = await sendAll([sent('2')], DAY_MS + 1)
    expect(asked).toEqual(['new'])
    expect(lines[0][1]).toBe(
      'Dropped the change of flux Kustomization/apps/old (old, success): it was not recorded within 24 h of 1970-01-01T00:00:00.000Z.'
    )
    expect(metrics.dropped.expired).toBe(1)
  })

  it('waits for a change to arrive, and stops after the one it sends', async () => {
    const metrics = new Metrics()
    const stopping = new AbortController()
    let asked: () => void = () => {}
    const recording = new Promise<void>(resolve => {
      asked = resolve
    })
    const record = async () => {
      asked()
      return sent('1')
    }
    const sending = sendWaiting({ state, log: () => {}, metrics, record }, stopping.signal)
    await state.update([keyed('a')], Date.now())
    await recording
    stopping.abort()
    await sending
    expect(metrics.recorded).toBe(1)
    expect(state.waitingCount).toBe(0)
  })
})

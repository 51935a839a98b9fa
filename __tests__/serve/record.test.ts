/**
 * The receiver's seam to the core, against the emulator: a deploy's change as every door builds
 * it, sent once, and what each answer means for the queue (sent, wait, or drop).
 */
import { afterEach, describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import type { Emulator } from '../../emulator/emulator.ts'
import { ServiceError } from '../../src/errors.ts'
import { hasUnsafeCharacter } from '../../src/helpers/text.ts'
import { Redactor } from '../../src/redact.ts'
import type { DeployChange } from '../../src/serve/deploys.ts'
import { readNotification, type Controller } from '../../src/serve/notifications.ts'
import { outcomeOf, Recorder } from '../../src/serve/record.ts'
import { closedPort, startLoopback } from '../support/loopback.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})

const advice = {
  raiseTimeout: 'wait',
  checkAddress: 'check the address',
  checkApiKey: 'check the key'
}
let recorders: Recorder[] = []
afterEach(() => {
  for (const recorder of recorders) recorder.close()
  recorders = []
})

function recorder(baseUrl = emulator.url, apiKey = emulator.apiKey): Recorder {
  const made = new Recorder({ baseUrl: new URL(baseUrl), apiKey, redactor: new Redactor(), advice })
  recorders.push(made)
  return made
}

/** The change a recorded notification makes, as the deploy memory hands it on. */
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
    expect(outcomeOf(new Error('boom'))).toEqual({ wait: 'boom', keyRejected: false })
    const redirect = new ServiceError('moved', {
      call: 'POST /v2/change',
      kind: 'protocol',
      status: 302
    })
    expect(outcomeOf(redirect)).toEqual({ wait: 'moved', keyRejected: false })
  })
})

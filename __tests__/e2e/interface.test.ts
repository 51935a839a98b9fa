/**
 * The bundled action as a complete client of the interface, one process run per command: events
 * from a file, event results, reading a change back and checking a key, against the strict
 * emulator. Validation, batching limits, retries and partial failures are proven in-process by
 * the event pipeline's and the commands' tests.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Emulator } from '../../emulator/emulator.ts'
import { actionAgainst } from '../support/run-action.ts'
import { testCertificate } from '../../emulator/tls.ts'

let emulator: Emulator
let certPath: string
let action: ReturnType<typeof actionAgainst>
let workspace: string

beforeAll(async () => {
  certPath = (await testCertificate()).certPath
  emulator = await Emulator.start()
  action = actionAgainst(emulator, certPath)
  workspace = mkdtempSync(join(tmpdir(), 'cta-events-'))
})
afterAll(async () => {
  await emulator.close()
  rmSync(workspace, { recursive: true, force: true })
})
beforeEach(() => emulator.reset())

function idsInBody(body: string): string[] {
  return body
    .split('\n')
    .filter(line => line.trim() !== '')
    .map(line => (JSON.parse(line) as { id: string }).id)
}

describe('command: events', () => {
  it('streams a 2100-event NDJSON file in 3 or more requests, ids in input order', async () => {
    const path = join(workspace, 'events.ndjson')
    const lines = Array.from({ length: 2100 }, (_, i) =>
      JSON.stringify({ id: `evt-${i}`, name: 'deploy.step', data: { i } })
    )
    writeFileSync(path, lines.join('\n') + '\n')

    const result = await action(
      { command: 'events', 'events-file': 'events.ndjson' },
      { env: { GITHUB_WORKSPACE: workspace } }
    )
    expect(result.exitCode).toBe(0)
    const streamed = emulator.requestsTo('POST /v2/stream')
    expect(streamed.length).toBeGreaterThanOrEqual(3)
    // Batches are in flight together, so they may arrive in any order; each is a run of the input.
    const batches = streamed
      .map(q => idsInBody(q.body))
      .sort((a, b) => Number(a[0].slice(4)) - Number(b[0].slice(4)))
    expect(batches.flat()).toEqual(lines.map((_, i) => `evt-${i}`))
    expect(JSON.parse(result.outputs['event-ids'])).toEqual(lines.map((_, i) => `evt-${i}`))
    expect(emulator.events.get('evt-2099')?.data).toEqual({ i: 2099 })
    expect(result.summary).toContain('2100')
  })
})

describe('command: event-results', () => {
  it('asks for 2100 ids in 3 requests, encoding a comma inside an id', async () => {
    const ids = Array.from({ length: 2100 }, (_, i) => (i === 1500 ? 'order,42' : `evt-${i}`))
    const result = await action({ command: 'event-results', 'event-ids': JSON.stringify(ids) })

    expect(result.exitCode).toBe(0)
    const requests = emulator.requestsTo('GET /v2/event_results')
    expect(requests).toHaveLength(3)
    expect(requests[1].query).toContain('order%2C42')
    expect(requests[1].query.split(',')).toHaveLength(1000)
    const results = JSON.parse(result.outputs['event-results']) as Array<{ id: string }>
    expect(results).toHaveLength(2100)
    expect(results[1500].id).toBe('order,42')
  })
})

describe('command: get-change', () => {
  it('reads back the change that command change recorded', async () => {
    const recorded = await action({ description: 'Flip the checkout flag', team: 'payments' })
    const changeId = recorded.outputs['change-id']
    const result = await action({ command: 'get-change', 'change-id': changeId })

    expect(result.exitCode).toBe(0)
    const change = JSON.parse(result.outputs['change']) as Record<string, unknown>
    expect(change).toEqual(emulator.changes.get(changeId))
    expect(change['description']).toBe('Flip the checkout flag')
    expect(result.summary).toContain('Flip the checkout flag')
    expect(emulator.requestsTo('GET /v2/change/*')[0].rawPath).toBe(`/v2/change/${changeId}`)
  })
})

describe('command: hello', () => {
  it('succeeds with a good key', async () => {
    const result = await action({ command: 'hello' })
    expect(result.exitCode).toBe(0)
    expect(result.summary).toContain('valid')
  })
})

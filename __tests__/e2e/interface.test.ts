/**
 * The bundled action as a complete client of the interface: events, event results, reading a
 * change back and checking a key, against the strict emulator.
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
  it('sends 2100 inline events in 3 or more requests, all stored, ids in input order', async () => {
    const events = Array.from({ length: 2100 }, (_, i) => ({ name: 'deploy.step', data: { i } }))
    const result = await action({ command: 'events', events: JSON.stringify(events) })

    expect(result.exitCode).toBe(0)
    const streamed = emulator.requestsTo('POST /v2/stream')
    expect(streamed.length).toBeGreaterThanOrEqual(3)
    expect(streamed.every(q => q.headers['content-type'] === 'application/x-ndjson')).toBe(true)
    const ids = JSON.parse(result.outputs['event-ids']) as string[]
    expect(ids).toHaveLength(2100)
    expect(new Set(ids).size).toBe(2100)
    // In input order: the i-th id belongs to the event whose data.i is i.
    ids.forEach((id, i) => expect(emulator.events.get(id)?.data).toEqual({ i }))
    expect(result.summary).toContain('2100')
  })

  it('streams a 6000-event NDJSON file of 700-byte events', async () => {
    const path = join(workspace, 'events.ndjson')
    // Each event is exactly 700 bytes on its line: its padding makes up the difference.
    const lines = Array.from({ length: 6000 }, (_, i) => {
      const bare = JSON.stringify({ id: `evt-${i}`, name: 'audit', data: { i, padding: '' } })
      return bare.replace('"padding":""', `"padding":"${'x'.repeat(700 - bare.length)}"`)
    })
    expect(lines.every(line => Buffer.byteLength(line) === 700)).toBe(true)
    writeFileSync(path, lines.join('\n') + '\n')

    const result = await action(
      { command: 'events', 'events-file': 'events.ndjson' },
      { env: { GITHUB_WORKSPACE: workspace } }
    )
    expect(result.exitCode).toBe(0)
    expect(emulator.events.size).toBe(6000)
    expect(JSON.parse(result.outputs['event-ids'])).toEqual(lines.map((_, i) => `evt-${i}`))
    for (const request of emulator.requestsTo('POST /v2/stream')) {
      expect(Buffer.byteLength(request.body)).toBeLessThanOrEqual(1_000_000)
      expect(idsInBody(request.body).length).toBeLessThanOrEqual(1000)
    }
  })

  it('loses nothing to a 5XX mid-stream: retried batches carry the same ids', async () => {
    emulator.inject('POST /v2/stream', { status: 503, body: 'busy' }, 2)
    const events = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({ name: 'e', data: { i } })
    )
    const result = await action({ command: 'events', events: events.join('\n') })

    expect(result.exitCode).toBe(0)
    const ids = JSON.parse(result.outputs['event-ids']) as string[]
    expect(ids).toHaveLength(3000)
    expect(emulator.events.size).toBe(3000)
    const requests = emulator.requestsTo('POST /v2/stream')
    expect(requests).toHaveLength(5)
    // Every id the failed attempts carried was later stored: no event got a new id on retry.
    const sent = requests.flatMap(q => idsInBody(q.body))
    expect(sent.every(id => emulator.events.has(id))).toBe(true)
    expect(new Set(sent).size).toBe(3000)
  })

  it('rejects a 1.1 MB event before sending anything', async () => {
    const path = join(workspace, 'huge.ndjson')
    writeFileSync(path, JSON.stringify({ name: 'big', data: 'x'.repeat(1_100_000) }) + '\n')
    const result = await action({ command: 'events', 'events-file': path })
    expect(result.exitCode).toBe(1)
    expect(emulator.requests).toEqual([])
    expect(result.stdout).toMatch(/::error::.*line 1/)
  })

  it('reports the accepted ids and the positions not accepted when a batch keeps failing', async () => {
    emulator.inject(
      'POST /v2/stream',
      { status: 400, body: '{"error":"quota exceeded"}' },
      Infinity
    )
    const events = Array.from({ length: 10 }, (_, i) => JSON.stringify({ name: 'e', data: { i } }))
    const result = await action({ command: 'events', events: events.join('\n') })
    expect(result.exitCode).toBe(1)
    expect(JSON.parse(result.outputs['event-ids'])).toEqual([])
    expect(result.outputs['error']).toContain('quota exceeded')
    expect(result.outputs['error']).toMatch(/0 of 10/)
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

  it('says clearly that an unknown id does not exist', async () => {
    const result = await action({ command: 'get-change', 'change-id': 'no-such-change' })
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/::error::GET \/v2\/change\/no-such-change.*404/)
    expect(result.stdout).toContain('change-id')
  })
})

describe('command: hello', () => {
  it('succeeds with a good key', async () => {
    const result = await action({ command: 'hello' })
    expect(result.exitCode).toBe(0)
    expect(result.summary).toContain('valid')
  })

  it('says plainly that a bad key was rejected', async () => {
    const result = await action({ command: 'hello', 'api-key': 'not-the-key' })
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/::error::GET \/v2\/hello.*401.*rejected the API key/)
  })
})

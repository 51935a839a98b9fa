/**
 * events and event-results in process, against the emulator, with their dry runs: a file of 2100
 * events in batches, and 2100 ids read in requests of at most 1000.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { combineResults } from '../../src/commands/events.ts'
import { run } from '../../src/main.ts'
import { Emulator } from '../../emulator/emulator.ts'
import { trustTestCertificate } from '../../emulator/tls.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { renderSummary } from '../support/summary.ts'

let emulator: Emulator
let workspace: string

beforeAll(async () => {
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'])
    delete process.env[name]
  await trustTestCertificate()
  emulator = await Emulator.start()
  workspace = mkdtempSync(join(tmpdir(), 'cta-commands-'))
})
afterAll(async () => {
  await emulator.close()
  rmSync(workspace, { recursive: true, force: true })
})
beforeEach(() => emulator.reset())

async function action(inputs: Record<string, string>): Promise<FakeRunner> {
  const runner = new FakeRunner({
    'api-key': emulator.apiKey,
    'base-url': emulator.url,
    'max-attempts': '2',
    ...inputs
  })
  await run(runner, { GITHUB_WORKSPACE: workspace })
  return runner
}

describe('events', () => {
  it('sends inline NDJSON and outputs the ids in input order', async () => {
    const r = await action({
      command: 'events',
      events: '{"name":"a","data":1}\n{"id":"mine","name":"b","data":{"x":true}}\n'
    })
    expect(r.failures).toEqual([])
    const ids = JSON.parse(r.outputs['event-ids']) as string[]
    expect(ids[1]).toBe('mine')
    expect(emulator.events.get(ids[0])).toMatchObject({ name: 'a', data: 1 })
    expect(r.summary).toContain('| Accepted | 2 |')
    expect(r.lines).toContain('Sent 2 events in 1 request.')
  })

  it('reads a file relative to the workspace', async () => {
    writeFileSync(join(workspace, 'events.json'), '[{"name":"a","data":{}},{"name":"b","data":[]}]')
    const r = await action({ command: 'events', 'events-file': 'events.json' })
    expect(r.failures).toEqual([])
    expect(emulator.events.size).toBe(2)
  })

  it('streams a 2100-event NDJSON file in 3 or more requests, ids in input order', async () => {
    const lines = Array.from({ length: 2100 }, (_, i) =>
      JSON.stringify({ id: `evt-${i}`, name: 'deploy.step', data: { i } })
    )
    writeFileSync(join(workspace, 'events.ndjson'), lines.join('\n') + '\n')
    const r = await action({ command: 'events', 'events-file': 'events.ndjson' })
    expect(r.failures).toEqual([])
    const streamed = emulator.requestsTo('POST /v2/stream')
    expect(streamed.length).toBeGreaterThanOrEqual(3)
    // Batches are in flight together, so they may arrive in any order; each is a run of the input.
    const idsIn = (body: string): string[] =>
      body
        .split('\n')
        .filter(line => line.trim() !== '')
        .map(line => (JSON.parse(line) as { id: string }).id)
    const batches = streamed
      .map(request => idsIn(request.body))
      .sort((a, b) => Number(a[0].slice(4)) - Number(b[0].slice(4)))
    const ids = lines.map((_, i) => `evt-${i}`)
    expect(batches.flat()).toEqual(ids)
    expect(JSON.parse(r.outputs['event-ids'])).toEqual(ids)
    expect(emulator.events.get('evt-2099')?.data).toEqual({ i: 2099 })
    expect(r.summary).toContain('2100')
  })

  it('names the invalid event and sends nothing', async () => {
    const r = await action({ command: 'events', events: '{"name":"a","data":1}\n{"name":""}' })
    expect(r.failures[0]).toContain('Input "events", line 2')
    expect(emulator.requests).toEqual([])
  })

  it('names the file when it cannot be read', async () => {
    const r = await action({ command: 'events', 'events-file': 'missing.ndjson' })
    expect(r.failures[0]).toMatch(/^Input "events-file" \(".*missing\.ndjson"\) cannot be read/)
  })

  it('keeps the accepted ids when a batch fails, and treats an outage as a warning', async () => {
    emulator.inject('POST /v2/stream', { status: 503, body: 'down' }, Infinity)
    const r = await action({ command: 'events', events: '{"name":"a","data":1}' })
    expect(r.failures).toEqual([])
    expect(r.warnings[0]).toMatch(/^Sent 0 of 1 event; event 1 was not accepted: POST \/v2\/stream/)
    expect(r.outputs['event-ids']).toBe('[]')
  })

  it('says how many events were sent and how many the service rejected', async () => {
    emulator.inject('POST /v2/stream', { status: 400, body: '{"message":"bad event"}' })
    const r = await action({
      command: 'events',
      events: '{"name":"a","data":1}\n{"name":"b","data":2}'
    })
    const { title, cells } = renderSummary(r.summary)
    expect(title).toBe('2 events not accepted: the service rejected the request')
    expect(cells).toEqual([
      'Events',
      '2',
      'Sent',
      '2 events in 1 request',
      'Accepted',
      '0',
      'Not accepted',
      '2 (the service rejected the request)'
    ])
  })

  it('in a dry run prints the batches, sets no output and says they were not sent', async () => {
    const r = await action({
      command: 'events',
      events: '{"name":"a","data":1}',
      'dry-run': 'true'
    })
    expect(emulator.requests).toEqual([])
    expect(r.lines).toContain(`[dry-run] POST ${emulator.url}v2/stream`)
    expect(r.lines).toContain('  Content-Type: application/x-ndjson')
    expect(r.outputs).toEqual({})
    expect(r.summary).toContain('### Events \\(not sent\\)')
    expect(r.summary).not.toContain('Accepted')
  })
})

describe('event-results', () => {
  it('outputs the results of every id', async () => {
    const r = await action({ command: 'event-results', 'event-ids': 'a\nb,c' })
    expect(r.failures).toEqual([])
    const results = JSON.parse(r.outputs['event-results']) as Array<{ id: string }>
    expect(results.map(result => result.id)).toEqual(['a', 'b,c'])
    expect(emulator.requests[0].query).toBe('ids=a,b%2Cc')
    expect(r.summary).toContain('| Results | 2 |')
  })

  it('asks for 2100 ids in 3 requests of at most 1000, encoding a comma inside an id', async () => {
    const ids = Array.from({ length: 2100 }, (_, i) => (i === 1500 ? 'order,42' : `evt-${i}`))
    const r = await action({ command: 'event-results', 'event-ids': JSON.stringify(ids) })
    expect(r.failures).toEqual([])
    const requests = emulator.requestsTo('GET /v2/event_results')
    expect(requests).toHaveLength(3)
    expect(requests[1].query).toContain('order%2C42')
    expect(requests[1].query.split(',')).toHaveLength(1000)
    const results = JSON.parse(r.outputs['event-results']) as Array<{ id: string }>
    expect(results).toHaveLength(2100)
    expect(results[1500].id).toBe('order,42')
  })

  it('in a dry run prints the request and reads nothing', async () => {
    const r = await action({ command: 'event-results', 'event-ids': 'a', 'dry-run': 'true' })
    expect(emulator.requests).toEqual([])
    expect(r.lines).toContain(`[dry-run] GET ${emulator.url}v2/event_results?ids=a`)
    expect(r.outputs).toEqual({})
    expect(r.summary).toContain('### Event results \\(not read\\)')
    expect(r.summary).not.toContain('Results |')
  })

  it('concatenates arrays of results and otherwise keeps each response whole', () => {
    expect(combineResults([[1, 2], [3]])).toEqual([1, 2, 3])
    expect(combineResults([{ a: 1 }, [3]])).toEqual([{ a: 1 }, [3]])
    expect(combineResults([null])).toEqual([null])
  })
})

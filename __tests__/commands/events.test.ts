/**
 * events and event-results against the emulator, through no door, with their dry runs: a file of
 * 2100 events in batches, and 2100 ids read in requests of at most 1000.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunDefaults } from '../../src/change.ts'
import { combineResults, getEventResults, sendEvents } from '../../src/commands/events.ts'
import type { Emulator } from '../../emulator/emulator.ts'
import type { CommandResult } from '../../src/report.ts'
import { finish, runCommandWith, type CommandRun } from '../support/command-context.ts'
import { useEmulator } from '../support/use-emulator.ts'
import { renderSummary } from '../support/summary.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})
let workspace: string
beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'cta-commands-'))
})
afterAll(() => rmSync(workspace, { recursive: true, force: true }))

/** The command's run against the emulator, its outputs and summary written. */
async function command(
  handler: typeof sendEvents,
  given: Record<string, string>
): Promise<CommandRun<CommandResult>> {
  const inputs = { 'api-key': emulator.apiKey, 'base-url': emulator.url, 'max-attempts': '2' }
  const run: RunDefaults = { metadata: { key: 'run', fields: {} }, workspace }
  const ran = await runCommandWith({ ...inputs, ...given }, run, handler)
  await finish(ran)
  return ran
}
const events = (given: Record<string, string>) =>
  command(sendEvents, { command: 'events', ...given })
const eventResults = (given: Record<string, string>) =>
  command(getEventResults, { command: 'event-results', ...given })

describe('events', () => {
  it('sends inline NDJSON and outputs the ids in input order', async () => {
    const { result, error, recorder } = await events({
      events: '{"name":"a","data":1}\n{"id":"mine","name":"b","data":{"x":true}}\n'
    })
    expect(error).toBeUndefined()
    expect(result?.title).toEqual({ done: { subject: '2 events', outcome: 'sent' } })
    const ids = JSON.parse(recorder.outputs['event-ids']) as string[]
    expect(ids[1]).toBe('mine')
    expect(emulator.events.get(ids[0])).toMatchObject({ name: 'a', data: 1 })
    expect(recorder.summary).toContain('| Accepted | 2 |')
    expect(recorder.lines).toContain('Sent 2 events in 1 request.')
  })

  it('reads a file relative to the workspace', async () => {
    writeFileSync(join(workspace, 'events.json'), '[{"name":"a","data":{}},{"name":"b","data":[]}]')
    const { error } = await events({ 'events-file': 'events.json' })
    expect(error).toBeUndefined()
    expect(emulator.events.size).toBe(2)
  })

  it('streams a 2100-event NDJSON file in 3 or more requests, ids in input order', async () => {
    const lines = Array.from({ length: 2100 }, (_, i) =>
      JSON.stringify({ id: `evt-${i}`, name: 'deploy.step', data: { i } })
    )
    writeFileSync(join(workspace, 'events.ndjson'), lines.join('\n') + '\n')
    const { error, recorder } = await events({ 'events-file': 'events.ndjson' })
    expect(error).toBeUndefined()
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
    expect(JSON.parse(recorder.outputs['event-ids'])).toEqual(ids)
    expect(emulator.events.get('evt-2099')?.data).toEqual({ i: 2099 })
    expect(recorder.summary).toContain('2100')
  })

  it('names the invalid event and sends nothing', async () => {
    const { error, recorder } = await events({ events: '{"name":"a","data":1}\n{"name":""}' })
    expect(error).toMatchObject({ input: 'events' })
    expect(recorder.failures[0]).toContain('<events>, line 2')
    expect(emulator.requests).toEqual([])
  })

  it('names the file when it cannot be read', async () => {
    const { recorder } = await events({ 'events-file': 'missing.ndjson' })
    expect(recorder.failures[0]).toMatch(/^<events-file> \(".*missing\.ndjson"\) cannot be read/)
  })

  it('keeps the accepted ids when a batch fails, and treats an outage as a warning', async () => {
    emulator.inject('POST /v2/stream', { status: 503, body: 'down' }, Infinity)
    const { recorder } = await events({ events: '{"name":"a","data":1}' })
    expect(emulator.requestsTo('POST /v2/stream')).toHaveLength(2)
    expect(recorder.failures).toEqual([])
    expect(recorder.warnings[0]).toMatch(
      /^Sent 0 of 1 event; event 1 was not accepted: POST \/v2\/stream/
    )
    expect(recorder.outputs['event-ids']).toBe('[]')
  })

  it('says how many events were sent and how many the service rejected', async () => {
    emulator.inject('POST /v2/stream', { status: 400, body: '{"message":"bad event"}' })
    const { recorder } = await events({ events: '{"name":"a","data":1}\n{"name":"b","data":2}' })
    const { title, cells } = renderSummary(recorder.summary)
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
    const { recorder } = await events({ events: '{"name":"a","data":1}', 'dry-run': 'true' })
    expect(emulator.requests).toEqual([])
    expect(recorder.lines).toContain(`[dry-run] POST ${emulator.url}v2/stream`)
    expect(recorder.lines).toContain('  Content-Type: application/x-ndjson')
    expect(recorder.outputs).toEqual({})
    expect(recorder.summary).toContain('### Events \\(not sent\\)')
    expect(recorder.summary).not.toContain('Accepted')
  })
})

describe('event-results', () => {
  it('outputs the results of every id', async () => {
    const { error, recorder } = await eventResults({ 'event-ids': 'a\nb,c' })
    expect(error).toBeUndefined()
    const results = JSON.parse(recorder.outputs['event-results']) as Array<{ id: string }>
    expect(results.map(result => result.id)).toEqual(['a', 'b,c'])
    expect(emulator.requests[0].query).toBe('ids=a,b%2Cc')
    expect(recorder.summary).toContain('| Results | 2 |')
  })

  it('asks for 2100 ids in 3 requests of at most 1000, encoding a comma inside an id', async () => {
    const ids = Array.from({ length: 2100 }, (_, i) => (i === 1500 ? 'order,42' : `evt-${i}`))
    const { error, recorder } = await eventResults({ 'event-ids': JSON.stringify(ids) })
    expect(error).toBeUndefined()
    const requests = emulator.requestsTo('GET /v2/event_results')
    expect(requests).toHaveLength(3)
    expect(requests[1].query).toContain('order%2C42')
    expect(requests[1].query.split(',')).toHaveLength(1000)
    const results = JSON.parse(recorder.outputs['event-results']) as Array<{ id: string }>
    expect(results).toHaveLength(2100)
    expect(results[1500].id).toBe('order,42')
  })

  it('in a dry run prints the request and reads nothing', async () => {
    const { recorder } = await eventResults({ 'event-ids': 'a', 'dry-run': 'true' })
    expect(emulator.requests).toEqual([])
    expect(recorder.lines).toContain(`[dry-run] GET ${emulator.url}v2/event_results?ids=a`)
    expect(recorder.outputs).toEqual({})
    expect(recorder.summary).toContain('### Event results \\(not read\\)')
    expect(recorder.summary).not.toContain('Results |')
  })

  it('concatenates arrays of results and otherwise keeps each response whole', () => {
    expect(combineResults([[1, 2], [3]])).toEqual([1, 2, 3])
    expect(combineResults([{ a: 1 }, [3]])).toEqual([{ a: 1 }, [3]])
    expect(combineResults([null])).toEqual([null])
  })
})

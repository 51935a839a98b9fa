/**
 * The interface commands in process, against the emulator: events, event-results, get-change and
 * hello, with their dry runs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { combineResults } from '../../src/commands/events.ts'
import { run } from '../../src/main.ts'
import { Emulator } from '../../emulator/emulator.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { trustTestCertificate } from '../../emulator/tls.ts'

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

describe('command: events', () => {
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
  })

  it('reads a file relative to the workspace', async () => {
    writeFileSync(join(workspace, 'events.json'), '[{"name":"a","data":{}},{"name":"b","data":[]}]')
    const r = await action({ command: 'events', 'events-file': 'events.json' })
    expect(r.failures).toEqual([])
    expect(emulator.events.size).toBe(2)
  })

  it('names the invalid event and sends nothing', async () => {
    const r = await action({ command: 'events', events: '{"name":"a","data":1}\n{"name":""}' })
    expect(r.failures[0]).toContain('line 2')
    expect(emulator.requests).toEqual([])
  })

  it('refuses fields the service does not accept, before sending', async () => {
    const r = await action({ command: 'events', events: '{"name":"a","data":1,"ts":5}' })
    expect(r.failures[0]).toContain('"ts"')
    expect(emulator.requests).toEqual([])
  })

  it('keeps the accepted ids when a batch fails, and treats an outage as a warning', async () => {
    emulator.inject('POST /v2/stream', { status: 503, body: 'down' }, Infinity)
    const r = await action({ command: 'events', events: '{"name":"a","data":1}' })
    expect(r.failures).toEqual([])
    expect(r.warnings[0]).toMatch(/0 of 1 event;/)
    expect(r.outputs['event-ids']).toBe('[]')
  })

  it('prints the batches on dry-run and sends nothing', async () => {
    const r = await action({
      command: 'events',
      events: '{"name":"a","data":1}',
      'dry-run': 'true'
    })
    expect(emulator.requests).toEqual([])
    expect(r.lines.join('\n')).toContain(`[dry-run] POST ${emulator.url}v2/stream`)
    expect(r.lines.join('\n')).toContain('Content-Type: application/x-ndjson')
    expect(r.outputs['event-ids']).toBeUndefined()
  })
})

describe('command: event-results', () => {
  it('outputs the results of every id', async () => {
    const r = await action({ command: 'event-results', 'event-ids': 'a\nb,c' })
    expect(r.failures).toEqual([])
    const results = JSON.parse(r.outputs['event-results']) as Array<{ id: string }>
    expect(results.map(result => result.id)).toEqual(['a', 'b,c'])
    expect(emulator.requests[0].query).toBe('ids=a,b%2Cc')
  })

  it('sends nothing on dry-run', async () => {
    const r = await action({ command: 'event-results', 'event-ids': 'a', 'dry-run': 'true' })
    expect(emulator.requests).toEqual([])
    expect(r.lines.join('\n')).toContain(`[dry-run] GET ${emulator.url}v2/event_results?ids=a`)
  })
})

describe('combineResults', () => {
  it('concatenates arrays and otherwise keeps each response whole', () => {
    expect(combineResults([[1, 2], [3]])).toEqual([1, 2, 3])
    expect(combineResults([{ a: 1 }, [3]])).toEqual([{ a: 1 }, [3]])
    expect(combineResults([null])).toEqual([null])
  })
})

describe('command: get-change', () => {
  it('outputs the change and shows it in the summary', async () => {
    const recorded = await action({ description: 'Flag flip', labels: 'flags' })
    const id = recorded.outputs['change-id']
    const r = await action({ command: 'get-change', 'change-id': id })
    expect(r.failures).toEqual([])
    expect(JSON.parse(r.outputs['change'])).toEqual(emulator.changes.get(id))
    expect(r.summary).toContain('Flag flip')
    expect(r.summary).toMatch(/Created at \| \d{4}-\d\d-\d\dT/)
  })

  it('fails clearly on an unknown id', async () => {
    const r = await action({ command: 'get-change', 'change-id': 'nope' })
    expect(r.failures[0]).toContain('GET /v2/change/nope')
    expect(r.failures[0]).toContain('404')
    expect(r.failures[0]).toContain('change-id')
  })
})

describe('command: hello', () => {
  it('accepts a good key', async () => {
    const r = await action({ command: 'hello' })
    expect(r.failures).toEqual([])
    expect(r.summary).toContain('The API key is valid')
  })

  it('says the key was rejected', async () => {
    const r = await action({ command: 'hello', 'api-key': 'bad-key-000' })
    expect(r.failures[0]).toContain('rejected the API key')
  })

  it('accepts "OK" as a JSON string too', async () => {
    const jsonHello = await Emulator.start({ helloAsJson: true })
    try {
      const runner = new FakeRunner({
        'api-key': jsonHello.apiKey,
        'base-url': jsonHello.url,
        command: 'hello'
      })
      await run(runner, {})
      expect(runner.failures).toEqual([])
    } finally {
      await jsonHello.close()
    }
  })

  it('rejects a 2XX that is not OK', async () => {
    emulator.inject('GET /v2/hello', { status: 200, body: '<html>login</html>' })
    const r = await action({ command: 'hello' })
    expect(r.failures[0]).toContain('"OK"')
  })
})

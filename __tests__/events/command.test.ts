/**
 * The events and event-results commands over the pipeline, with a fake client and report: how
 * the pipeline's errors name the inputs, the dry run, and the wording of what was sent.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Settings } from '../../src/action/settings.ts'
import type { CommandContext } from '../../src/commands/command.ts'
import { getEventResults, sendEvents } from '../../src/commands/events.ts'
import { InputError, ServiceError } from '../../src/errors.ts'
import type { Report } from '../../src/report.ts'
import type { ServiceClient } from '../../src/service/client.ts'
import type { ServiceRequest } from '../../src/service/transport.ts'

let workspace: string
beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'events-command-'))
})
afterAll(() => {
  rmSync(workspace, { recursive: true, force: true })
})

interface Recorded {
  sent: string[]
  resultRequests: string[][]
  printed: ServiceRequest[]
  info: string[]
  tables: Array<{ title: string; rows: unknown }>
  outputs: Record<string, string>
}

/** A context whose client answers the ids in each body (or fails from `failAt` on). */
function contextOf(
  settings: Partial<Settings>,
  options: { failAt?: number } = {}
): { context: CommandContext; recorded: Recorded } {
  const recorded: Recorded = {
    sent: [],
    resultRequests: [],
    printed: [],
    info: [],
    tables: [],
    outputs: {}
  }
  const client = {
    sendEvents: async (body: Uint8Array): Promise<string[]> => {
      const text = Buffer.from(body).toString('utf8')
      if (options.failAt !== undefined && recorded.sent.length >= options.failAt) {
        throw new ServiceError('POST /v2/stream failed with status 503 after 3 attempts.', {
          call: 'POST /v2/stream',
          kind: 'outage',
          status: 503
        })
      }
      recorded.sent.push(text)
      return text
        .trimEnd()
        .split('\n')
        .map(line => (JSON.parse(line) as { id: string }).id)
    },
    getEventResults: async (ids: readonly string[]): Promise<unknown> => {
      recorded.resultRequests.push([...ids])
      return ids.map(id => ({ id, result: 'ok' }))
    }
  }
  const report = {
    info: (message: string) => recorded.info.push(message),
    table: (title: string, rows: unknown) => recorded.tables.push({ title, rows }),
    output: (name: string, value: string) => (recorded.outputs[name] = value),
    outputLines: (name: string, lines: Iterable<string>) =>
      (recorded.outputs[name] = [...lines].join('\n'))
  }
  const context = {
    settings: { dryRun: false, ...settings } as Settings,
    client: client as unknown as ServiceClient,
    report: report as unknown as Report,
    env: { GITHUB_WORKSPACE: workspace },
    printRequest: (request: ServiceRequest) => recorded.printed.push(request)
  }
  return { context, recorded }
}

async function thrownBy(run: Promise<void>): Promise<unknown> {
  return run.then(
    () => undefined,
    (error: unknown) => error
  )
}

describe('command: events', () => {
  it('names the events input in what the pipeline refuses', async () => {
    const { context, recorded } = contextOf({ events: '{"name":"a","data":1}\n{"name":""}' })
    const error = await thrownBy(sendEvents(context))
    expect(error).toBeInstanceOf(InputError)
    expect((error as InputError).input).toBe('events')
    expect((error as InputError).message).toBe(
      'Input events, line 2: "name" is empty; it must be a non-empty string. Nothing was sent.'
    )
    expect(recorded.sent).toEqual([])
  })

  it('names the events-file input and its path, resolved in the workspace', async () => {
    writeFileSync(join(workspace, 'dup.ndjson'), '{"id":"a","name":"n","data":1}\n'.repeat(2))
    const { context } = contextOf({ eventsFile: 'dup.ndjson' })
    const error = await thrownBy(sendEvents(context))
    expect((error as InputError).input).toBe('events-file')
    expect((error as InputError).message).toBe(
      `Input events-file ("${join(workspace, 'dup.ndjson')}"), line 2: its "id" "a" is also the id of line 1; ids must be unique. Nothing was sent.`
    )
  })

  it('sends, outputs the accepted ids and says so with the right plurals', async () => {
    const { context, recorded } = contextOf({ events: '{"id":"only","name":"a","data":null}' })
    await sendEvents(context)
    expect(recorded.sent).toEqual(['{"id":"only","name":"a","data":null}\n'])
    expect(JSON.parse(recorded.outputs['event-ids'])).toEqual(['only'])
    expect(recorded.info).toEqual(['Sent 1 event in 1 request.'])
  })

  it('keeps the accepted ids of a partial failure, and keeps its cause an outage', async () => {
    const events = Array.from({ length: 1500 }, (_, index) =>
      JSON.stringify({ id: `e${index + 1}`, name: 'n', data: index })
    ).join('\n')
    const { context } = contextOf({ events }, { failAt: 1 })
    const error = await thrownBy(sendEvents(context))
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).kind).toBe('outage')
    expect((error as ServiceError).message).toBe(
      'Sent 1000 of 1500 events; events 1001–1500 were not accepted: POST /v2/stream failed with status 503 after 3 attempts.'
    )
  })

  it('in a dry run prints each batch as a request and sends nothing', async () => {
    const events = Array.from({ length: 1001 }, (_, index) =>
      JSON.stringify({ name: 'n', data: index })
    ).join('\n')
    const { context, recorded } = contextOf({ events, dryRun: true })
    await sendEvents(context)
    expect(recorded.sent).toEqual([])
    expect(recorded.printed.map(request => [request.method, request.path])).toEqual([
      ['POST', 'v2/stream'],
      ['POST', 'v2/stream']
    ])
    const lastBody = Buffer.from(recorded.printed[1].body as Uint8Array).toString('utf8')
    expect(lastBody).toMatch(/^\{"id":"[0-9a-f-]{36}","name":"n","data":1000\}\n$/)
    expect(recorded.tables).toEqual([
      {
        title: 'Events (dry run, not sent)',
        rows: [
          ['Events', 1001],
          ['Requests', 2]
        ]
      }
    ])
  })
})

describe('command: event-results', () => {
  const ids = Array.from({ length: 1001 }, (_, index) => `id-${index}`)

  it('reads at most 1000 ids per request and combines the results', async () => {
    const { context, recorded } = contextOf({ eventIds: ids })
    await getEventResults(context)
    expect(recorded.resultRequests.map(request => request.length)).toEqual([1000, 1])
    expect(JSON.parse(recorded.outputs['event-results'])).toHaveLength(1001)
    expect(recorded.info).toEqual(['Read 1001 results for 1001 event ids.'])
  })

  it('in a dry run prints each request and reads nothing', async () => {
    const { context, recorded } = contextOf({ eventIds: ids, dryRun: true })
    await getEventResults(context)
    expect(recorded.resultRequests).toEqual([])
    expect(recorded.printed.map(request => request.path)).toEqual([
      'v2/event_results',
      'v2/event_results'
    ])
    expect(recorded.printed[1].query).toBe('ids=id-1000')
    expect(recorded.outputs).toEqual({})
  })
})

/**
 * Events exactly as strict as the interface, and bounded reading: invalid UTF-8, duplicate ids,
 * deep JSON and over-long lines are refused with their positions; null data is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { Buffer } from 'node:buffer'
import { execFileSync, spawn } from 'node:child_process'
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAX_JSON_DEPTH } from '../../src/json.ts'
import { eventBatches, type EventBatch } from '../../src/events/batches.ts'
import { EventsError } from '../../src/events/events-error.ts'
import {
  MAX_DOCUMENT_BYTES,
  MAX_LINE_BYTES,
  LineTooLong,
  readLines,
  type EventSource
} from '../../src/events/source.ts'
import { validateEvents } from '../../src/events/validate.ts'

const THREE_GB = 3 * 1024 ** 3

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'events-strict-'))
})
afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

function file(name: string, content: string | Buffer): EventSource {
  const path = join(dir, name)
  writeFileSync(path, content)
  return { kind: 'file', path }
}

async function refusal(source: EventSource): Promise<EventsError> {
  const error = await validateEvents(source).then(
    () => undefined,
    (thrown: unknown) => thrown
  )
  expect(error).toBeInstanceOf(EventsError)
  return error as EventsError
}

async function batchesOf(source: EventSource): Promise<EventBatch[]> {
  const batches: EventBatch[] = []
  for await (const batch of eventBatches(await validateEvents(source))) batches.push(batch)
  return batches
}

/** JSON nested `depth` levels deep, counting the event object itself. */
function nestedEvent(depth: number): string {
  const inner = depth - 1
  return `{"name":"deep","data":${'['.repeat(inner)}${']'.repeat(inner)}}`
}

describe('bounded reading of any file', () => {
  it('refuses a 3 GB file without a newline at its first line, having read little of it', async () => {
    const path = join(dir, 'sparse-3g')
    writeFileSync(path, '')
    truncateSync(path, THREE_GB)
    const started = Date.now()
    const error = await refusal({ kind: 'file', path })
    expect(error.detail).toBe(
      `, line 1: it is longer than ${MAX_LINE_BYTES} bytes, more than one request may hold (reading stopped there). Nothing was sent.`
    )
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('refuses a valid event followed by a 3 GB line, naming line 2', async () => {
    const source = file('event-then-3g', '{"name":"ok","data":1}\n')
    appendFileSync(source.kind === 'file' ? source.path : '', '{"name":"huge","data":"')
    truncateSync(source.kind === 'file' ? source.path : '', THREE_GB)
    const error = await refusal(source)
    expect(error.problems).toEqual([
      { position: { unit: 'line', at: 2 }, problem: expect.stringContaining('longer than') }
    ])
  })

  it('stops at a line past the limit without waiting for the rest of it (a pipe that never ends)', async () => {
    const fifo = join(dir, 'endless')
    execFileSync('mkfifo', [fifo])
    // The writer keeps the pipe open after 3 MB without a newline: reading to the line's end
    // (or to the end of the input) would wait forever.
    const writer = spawn(
      'sh',
      ['-c', `exec 3>"${fifo}"; head -c 3000000 /dev/zero >&3; exec sleep 30`],
      { stdio: 'ignore' }
    )
    try {
      const lines = readLines({ kind: 'file', path: fifo })
      const thrown = await (async () => {
        for await (const group of lines) for (const line of group) void line
      })().then(
        () => undefined,
        (error: unknown) => error
      )
      expect(thrown).toBeInstanceOf(LineTooLong)
      expect((thrown as LineTooLong).lineNumber).toBe(1)
    } finally {
      writer.kill()
    }
  })

  it('reads a one-line JSON array longer than a line, as a document', async () => {
    const events = Array.from({ length: 3000 }, (_, index) => ({
      id: `d${index}`,
      name: 'n',
      data: 'x'.repeat(500)
    }))
    const text = JSON.stringify(events)
    expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_LINE_BYTES)
    const batches = await batchesOf(file('one-line-array.json', text))
    expect(batches.flatMap(batch => batch.ids)).toEqual(events.map(event => event.id))
  })

  it('refuses a JSON document larger than it reads whole', async () => {
    const source = file('huge-array.json', '[\n')
    truncateSync(source.kind === 'file' ? source.path : '', MAX_DOCUMENT_BYTES + 1)
    const error = await refusal(source)
    expect(error.detail).toContain(`is a JSON document of more than ${MAX_DOCUMENT_BYTES} bytes`)
    expect(error.detail).toContain('as NDJSON')
  })
})

describe('UTF-8', () => {
  const bad = Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])
  const valid = Buffer.from('{"name":"ok","data":1}\n')

  it('refuses invalid UTF-8 on an NDJSON line, naming the line', async () => {
    const error = await refusal(file('bad-utf8.ndjson', Buffer.concat([valid, valid, bad])))
    expect(error.detail).toBe(', line 3: it is not valid UTF-8. Nothing was sent.')
  })

  it('refuses invalid UTF-8 on the first line, and in a pretty-printed document', async () => {
    const first = await refusal(file('bad-first.ndjson', Buffer.concat([bad, Buffer.from('\n')])))
    expect(first.problems).toEqual([
      { position: { unit: 'line', at: 1 }, problem: 'it is not valid UTF-8' }
    ])
    const document = Buffer.concat([
      Buffer.from('{\n  "name": "n",\n  "data": "'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"\n}\n')
    ])
    const error = await refusal(file('bad.json', document))
    expect(error.detail).toContain(', line 3: it is not valid UTF-8')
  })

  it('refuses inline text with a lone surrogate, naming its line', async () => {
    const error = await refusal({
      kind: 'inline',
      text: '{"name":"a","data":1}\n{"name":"b\uD800","data":1}'
    })
    expect(error.detail).toContain(', line 2: it is not valid UTF-8')
  })

  it('sends multi-byte characters as written', async () => {
    const line = '{"id":"u","name":"é€😀","data":"ünïcödé"}'
    const [batch] = await batchesOf(file('unicode.ndjson', `${line}\n`))
    expect(batch.body.toString('utf8')).toBe(`${line}\n`)
  })
})

describe('ids unique within a run', () => {
  it('refuses a duplicated id in NDJSON, naming both lines', async () => {
    const error = await refusal({
      kind: 'inline',
      text: '{"id":"a","name":"n","data":1}\n{"name":"n","data":2}\n\n{"id":"a","name":"n","data":3}'
    })
    expect(error.detail).toBe(
      ', line 4: its "id" "a" is also the id of line 1; ids must be unique. Nothing was sent.'
    )
  })

  it('refuses a duplicated id in a JSON array, naming both events', async () => {
    const error = await refusal({
      kind: 'inline',
      text: JSON.stringify([
        { id: 'x', name: 'n', data: 1 },
        { id: 'y', name: 'n', data: 1 },
        { id: 'x', name: 'n', data: 1 }
      ])
    })
    expect(error.problems).toEqual([
      {
        position: { unit: 'event', at: 3 },
        problem: 'its "id" "x" is also the id of event 1; ids must be unique'
      }
    ])
  })
})

describe('data', () => {
  it('sends "data": null, a JSON value', async () => {
    const [batch] = await batchesOf({ kind: 'inline', text: '{"id":"n","name":"n","data":null}' })
    expect(batch.body.toString('utf8')).toBe('{"id":"n","name":"n","data":null}\n')
  })
})

describe(`JSON nested deeper than ${MAX_JSON_DEPTH}`, () => {
  it('accepts an NDJSON event at the bound and refuses one past it, naming the line', async () => {
    expect(
      (await validateEvents({ kind: 'inline', text: nestedEvent(MAX_JSON_DEPTH) })).total
    ).toBe(1)
    const error = await refusal({
      kind: 'inline',
      text: `{"name":"ok","data":1}\n${nestedEvent(MAX_JSON_DEPTH + 1)}`
    })
    expect(error.detail).toBe(
      `, line 2: it nests JSON deeper than ${MAX_JSON_DEPTH} levels. Nothing was sent.`
    )
  })

  it('refuses a 20,000-deep event in a document, naming its line, without overflowing the stack', async () => {
    const error = await refusal(
      file('deep.json', `[\n  {"name":"ok","data":1},\n  ${nestedEvent(20_000)}\n]\n`)
    )
    expect(error.detail).toContain(`, line 3: it nests JSON deeper than ${MAX_JSON_DEPTH} levels`)
    expect(error.message).not.toContain('call stack')
  })
})

describe('parse errors', () => {
  it('give the line number once, without the parser\'s "(line 1 column …)"', async () => {
    const error = await refusal({ kind: 'inline', text: '{"name":"ok","data":1}\n{"name":"n",' })
    expect(error.detail).toMatch(/^, line 2: it is not valid JSON \(.+ at position \d+\)\. /)
    expect(error.detail).not.toMatch(/column/)
  })
})

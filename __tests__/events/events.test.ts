import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { Buffer } from 'node:buffer'
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from '../../src/service/client.ts'
import { ServiceError } from '../../src/errors.ts'
import { BatchBuilder, eventBatches, type EventBatch } from '../../src/events/batches.ts'
import { EventsError } from '../../src/events/events-error.ts'
import type { EventSource } from '../../src/events/source.ts'
import {
  CONCURRENT_BATCHES,
  describePartialFailure,
  describePositions,
  streamEvents,
  type StreamResult
} from '../../src/events/stream.ts'
import { validateEvents } from '../../src/events/validate.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'events-test-'))
})
afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

function inline(text: string): EventSource {
  return { kind: 'inline', text }
}

function file(name: string, text: string): EventSource {
  const path = join(dir, name)
  writeFileSync(path, text)
  return { kind: 'file', path }
}

function ndjson(events: readonly unknown[]): string {
  return events.map(event => JSON.stringify(event)).join('\n')
}

/** Events with ids e1, e2, … so that the expected ids are known. */
function numberedEvents(count: number): Array<{ id: string; name: string; data: number }> {
  return Array.from({ length: count }, (_, index) => ({
    id: `e${index + 1}`,
    name: 'deploy',
    data: index
  }))
}

/** An event whose NDJSON line, newline included, is exactly `bytes` UTF-8 bytes. */
function eventOfBytes(bytes: number, id: string): { id: string; name: string; data: string } {
  const empty = Buffer.byteLength(`${JSON.stringify({ id, name: 'big', data: '' })}\n`)
  return { id, name: 'big', data: 'x'.repeat(bytes - empty) }
}

function idsInBody(bytes: Buffer): string[] {
  const body = bytes.toString('utf8')
  expect(body.endsWith('\n')).toBe(true)
  return body
    .slice(0, -1)
    .split('\n')
    .map(line => (JSON.parse(line) as { id: string }).id)
}

/** A fake service: answers the ids it finds in the body, like POST /v2/stream does. */
async function echoIds(batch: EventBatch): Promise<string[]> {
  return idsInBody(batch.body)
}

function bodyText(batch: EventBatch): string {
  return batch.body.toString('utf8')
}

async function collectBatches(source: EventSource): Promise<EventBatch[]> {
  const batches: EventBatch[] = []
  for await (const batch of eventBatches(await validateEvents(source))) batches.push(batch)
  return batches
}

/** How many events pass 1 finds. */
async function countEvents(source: EventSource): Promise<number> {
  return (await validateEvents(source)).total
}

/** Expects pass 1 to refuse the input (so nothing can be sent). */
async function expectRefused(source: EventSource): Promise<EventsError> {
  const error = await validateEvents(source).then(
    () => undefined,
    (thrown: unknown) => thrown
  )
  expect(error).toBeInstanceOf(EventsError)
  return error as EventsError
}

/** Validates, then streams. */
async function stream(
  source: EventSource,
  sendBatch: (batch: EventBatch) => Promise<readonly string[]>
): Promise<StreamResult> {
  return streamEvents(await validateEvents(source), sendBatch)
}

/** The accepted ids, parsed from the output's lines. */
function acceptedIdsOf(result: StreamResult): string[] {
  return JSON.parse([...result.accepted.jsonLines()].join('\n')) as string[]
}

describe('reading the events and events-file inputs', () => {
  it('reads NDJSON with a BOM, CRLF line ends, blank lines and a trailing newline', async () => {
    const source = inline(
      '\uFEFF{"id":"a","name":"n","data":1}\r\n\r\n  \r\n{"id":"b","name":"n","data":2}\r\n'
    )
    expect(await countEvents(source)).toBe(2)
    const [batch] = await collectBatches(source)
    expect(bodyText(batch)).toBe('{"id":"a","name":"n","data":1}\n{"id":"b","name":"n","data":2}\n')
  })

  it('reads the same NDJSON from a file', async () => {
    const source = file(
      'crlf.ndjson',
      '\uFEFF{"id":"a","name":"n","data":1}\r\n\r\n{"id":"b","name":"n","data":2}\r\n'
    )
    expect(await countEvents(source)).toBe(2)
    expect((await collectBatches(source))[0].ids).toEqual(['a', 'b'])
  })

  it('reads a single inline event object, on one line or pretty-printed', async () => {
    for (const text of [
      '{"id":"a","name":"n","data":{"k":1}}',
      '{\n  "id": "a",\n  "name": "n",\n  "data": {"k": 1}\n}'
    ]) {
      expect(await countEvents(inline(text))).toBe(1)
      const [batch] = await collectBatches(inline(text))
      expect(JSON.parse(bodyText(batch))).toEqual({ id: 'a', name: 'n', data: { k: 1 } })
    }
  })

  it('reads a JSON array on a single line as one document', async () => {
    const source = inline(`${JSON.stringify(numberedEvents(3))}\n`)
    expect(await countEvents(source)).toBe(3)
    expect((await collectBatches(source))[0].ids).toEqual(['e1', 'e2', 'e3'])
  })

  it('reads a pretty-printed JSON array file and a pretty-printed event object file', async () => {
    const array = file('array.json', `\uFEFF${JSON.stringify(numberedEvents(3), null, 2)}\n`)
    expect(await countEvents(array)).toBe(3)
    expect((await collectBatches(array))[0].ids).toEqual(['e1', 'e2', 'e3'])

    const object = file(
      'object.json',
      JSON.stringify({ id: 'x', name: 'n', data: [1, 2] }, null, 2)
    )
    expect(await countEvents(object)).toBe(1)
    expect(bodyText((await collectBatches(object))[0])).toBe('{"id":"x","name":"n","data":[1,2]}\n')
  })

  it('sends NDJSON lines as written, so numbers JavaScript would round keep every digit', async () => {
    const line = '{"name": "n",  "data": {"big": 12345678901234567890, "f": 1.0}}'
    const [batch] = await collectBatches(inline(`${line}\n`))
    expect(bodyText(batch)).toBe(`{"id":"${batch.ids[0]}",${line.slice(1)}\n`)
  })

  it('keeps numbers as written in a JSON document too', async () => {
    const [batch] = await collectBatches(
      inline(
        '[\n  {"id": "a", "name": "n", "data": {"big": 12345678901234567890, "f": 1.0, "small": 2}}\n]'
      )
    )
    expect(bodyText(batch)).toBe(
      '{"id":"a","name":"n","data":{"big":12345678901234567890,"f":1.0,"small":2}}\n'
    )
  })

  it('refuses fields other than id, name and data, which the service does not accept', async () => {
    const event = { name: 'n', data: { a: [1, { b: null }] }, extra: 'kept', timestamp: 12 }
    await expect(collectBatches(inline(JSON.stringify([event])))).rejects.toThrow(
      /event 1: it has "extra", "timestamp": an event has only "id", "name" and "data"/
    )
  })

  it('reads lines longer than a read chunk, and a last line without a newline', async () => {
    const events = ['a', 'b', 'c', 'd', 'e'].map(id => eventOfBytes(200_000, id))
    const source = file(
      'long-lines.ndjson',
      events.map(event => JSON.stringify(event)).join('\r\n')
    )
    const batches = await collectBatches(source)
    expect(batches.map(batch => batch.ids)).toEqual([['a', 'b', 'c', 'd', 'e']])
    expect(bodyText(batches[0])).toBe(events.map(event => `${JSON.stringify(event)}\n`).join(''))
  })

  it('reads a first line that is an array as the start of one JSON document', async () => {
    const error = await expectRefused(inline('[{"name":"a","data":1}]\n{"name":"b","data":2}'))
    expect(error.detail).toMatch(/^ is not valid JSON: .*line 2/)
  })
})

describe('validation: nothing is sent when any event is invalid', () => {
  const valid = '{"name":"ok","data":1}'
  it.each([
    ['no name', '{"data":1}', 'line 3', 'it has no "name"'],
    ['an empty name', '{"name":"","data":1}', 'line 3', '"name" is empty'],
    ['a numeric name', '{"name":5,"data":1}', 'line 3', '"name" is a number'],
    ['no data', '{"name":"n"}', 'line 3', 'it has no "data"'],
    ['a numeric id', '{"id":7,"name":"n","data":1}', 'line 3', '"id" is a number'],
    ['an empty id', '{"id":"","name":"n","data":1}', 'line 3', '"id" is empty'],
    ['an array instead of an object', '[1,2]', 'line 3', 'it is an array, not an event object'],
    ['a string instead of an object', '"deploy"', 'line 3', 'it is a string, not an event object'],
    ['bad JSON', '{"name":"n",', 'line 3', 'it is not valid JSON']
  ])(
    'names an NDJSON event with %s by its line number, counting blank lines',
    async (_, bad, label, problem) => {
      const error = await expectRefused(inline(`${valid}\n\n${bad}\n${valid}`))
      expect(error.kind).toBe('invalid')
      expect(error.detail).toContain(`, ${label}: ${problem}`)
      expect(error.detail).toContain('Nothing was sent')
      expect(error.problems).toEqual([
        { position: { unit: 'line', at: 3 }, problem: expect.stringContaining(problem) }
      ])
    }
  )

  it('names an event of a JSON array by its 1-based index', async () => {
    const error = await expectRefused(
      inline(JSON.stringify([{ name: 'a', data: 1 }, { name: 'b', data: 2 }, { name: 'c' }]))
    )
    expect(error.message).toContain('event 3: it has no "data"')
  })

  it('names an invalid line of a file', async () => {
    const source = file('bad.ndjson', `${valid}\n${valid}\n{"name":"","data":1}\n`)
    const error = await expectRefused(source)
    expect(error.detail).toContain(', line 3: "name" is empty')
  })

  it('lists the first few invalid events and counts the rest', async () => {
    const lines = Array.from({ length: 8 }, (_, index) => `{"name":"n${index}"}`)
    const error = await expectRefused(inline([valid, ...lines].join('\n')))
    expect(error.detail).toContain(' has 8 invalid events; nothing was sent.')
    expect(error.detail).toContain('line 2: it has no "data"')
    expect(error.detail).toContain('line 6: it has no "data"')
    expect(error.detail).not.toContain('line 7')
    expect(error.detail).toContain('and 3 more')
    expect(error.problems).toHaveLength(5)
  })

  it('refuses a document that is neither NDJSON nor valid JSON, with where it breaks', async () => {
    const error = await expectRefused(inline('{\n  "name": "n"\n  "data": 1\n}'))
    expect(error.detail).toMatch(/^ is not valid JSON: .*line 3/)
    expect(error.detail).toContain('NDJSON (one event object per line)')
  })

  it('refuses input with no events: empty, blank lines, an empty array', async () => {
    for (const text of ['', '\n\n  \r\n', '[]', '[\n]']) {
      const error = await expectRefused(inline(text))
      expect(error.detail).toContain(' has no events')
    }
    expect((await expectRefused(file('empty.ndjson', '\uFEFF\n'))).detail).toContain(
      ' has no events'
    )
  })

  it('refuses a missing file and a directory', async () => {
    const missing = await expectRefused({ kind: 'file', path: join(dir, 'nope.ndjson') })
    expect(missing.kind).toBe('unreadable')
    expect(missing.detail).toBe(' cannot be read: there is no such file.')
    const directory = await expectRefused({ kind: 'file', path: dir })
    expect(directory.detail).toBe(' is not a file.')
  })

  it('refuses an event larger than a request, before sending anything', async () => {
    const tooBig = eventOfBytes(MAX_REQUEST_BYTES + 1, 'big')
    const error = await expectRefused(inline(ndjson([{ name: 'a', data: 1 }, tooBig])))
    expect(error.detail).toContain(`line 2: it is ${MAX_REQUEST_BYTES + 1} bytes`)
  })

  it('counts the generated id in the size of an event that has none', async () => {
    const fits = eventOfBytes(MAX_REQUEST_BYTES, 'x'.repeat(36))
    const withoutId = { name: fits.name, data: fits.data }
    // With a 36-character generated id the event is exactly at the limit…
    expect(await countEvents(inline(JSON.stringify(withoutId)))).toBe(1)
    // …and one byte more does not fit.
    const error = await expectRefused(
      inline(JSON.stringify({ ...withoutId, data: `${fits.data}x` }))
    )
    expect(error.detail).toContain('with its generated id')
  })

  it('accepts an event of exactly the request size limit, alone in its batch', async () => {
    const batches = await collectBatches(
      inline(ndjson([eventOfBytes(MAX_REQUEST_BYTES, 'a'), { id: 'b', name: 'n', data: 1 }]))
    )
    expect(batches.map(batch => batch.ids)).toEqual([['a'], ['b']])
    expect(batches[0].body.length).toBe(MAX_REQUEST_BYTES)
  })
})

describe('batching within the limits', () => {
  it(`puts exactly ${MAX_EVENTS_PER_REQUEST} events in one batch, and one more in a second`, async () => {
    const exact = await collectBatches(inline(ndjson(numberedEvents(MAX_EVENTS_PER_REQUEST))))
    expect(exact.map(batch => batch.ids.length)).toEqual([MAX_EVENTS_PER_REQUEST])

    const oneMore = await collectBatches(inline(ndjson(numberedEvents(MAX_EVENTS_PER_REQUEST + 1))))
    expect(oneMore.map(batch => [batch.firstPosition, batch.ids.length])).toEqual([
      [0, MAX_EVENTS_PER_REQUEST],
      [MAX_EVENTS_PER_REQUEST, 1]
    ])
    expect(oneMore[1].ids).toEqual([`e${MAX_EVENTS_PER_REQUEST + 1}`])
  })

  it('fills a batch to exactly the byte limit, and starts a new one for an event that would pass it', async () => {
    const quarter = MAX_REQUEST_BYTES / 4
    const exact = await collectBatches(
      inline(ndjson(['a', 'b', 'c', 'd'].map(id => eventOfBytes(quarter, id))))
    )
    expect(exact.map(batch => batch.body.length)).toEqual([MAX_REQUEST_BYTES])

    const over = [
      eventOfBytes(quarter, 'a'),
      eventOfBytes(quarter, 'b'),
      eventOfBytes(quarter, 'c'),
      eventOfBytes(quarter + 1, 'd')
    ]
    const batches = await collectBatches(inline(ndjson(over)))
    expect(batches.map(batch => batch.ids)).toEqual([['a', 'b', 'c'], ['d']])
  })

  it.each([
    ['€ (3 bytes, 1 character)', '€', 100_000, 4, [3, 1]],
    ['an emoji (4 bytes, 2 characters)', '😀', 200_000, 2, [1, 1]]
  ])('counts %s in bytes, not characters', async (_, character, repeat, count, sizes) => {
    const events = Array.from({ length: count }, (__, index) => ({
      id: `m${index}`,
      name: 'n',
      data: character.repeat(repeat)
    }))
    const text = ndjson(events)
    expect(text.length).toBeLessThanOrEqual(MAX_REQUEST_BYTES)
    expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_REQUEST_BYTES)

    const batches = await collectBatches(inline(text))
    expect(batches.map(batch => batch.ids.length)).toEqual(sizes)
    for (const batch of batches) {
      expect(Buffer.byteLength(bodyText(batch))).toBe(batch.body.length)
      expect(batch.body.length).toBeLessThanOrEqual(MAX_REQUEST_BYTES)
    }
  })

  it('refuses, in the batching core, a line that cannot fit in any request (a changed file)', () => {
    const line = { id: 'a', parts: ['x'.repeat(MAX_REQUEST_BYTES)], bytes: MAX_REQUEST_BYTES + 1 }
    expect(() => new BatchBuilder().add(line)).toThrow(
      `an event is now ${MAX_REQUEST_BYTES + 1} bytes, more than a request may hold`
    )
  })
})

describe('event ids', () => {
  it('gives each event without an id a UUID, and keeps the ids clients chose', async () => {
    const [batch] = await collectBatches(
      inline(
        ndjson([
          { name: 'a', data: 1 },
          { id: 'mine', name: 'b', data: 2 },
          { name: 'c', data: 3 }
        ])
      )
    )
    expect(batch.ids[0]).toMatch(UUID)
    expect(batch.ids[1]).toBe('mine')
    expect(batch.ids[2]).toMatch(UUID)
    expect(batch.ids[0]).not.toBe(batch.ids[2])
    expect(idsInBody(batch.body)).toEqual(batch.ids)
  })
})

describe('streamEvents', () => {
  it(`keeps ${CONCURRENT_BATCHES} batches in flight, never more`, async () => {
    let inFlight = 0
    let maxInFlight = 0
    const result = await stream(
      inline(ndjson(numberedEvents(20 * MAX_EVENTS_PER_REQUEST))),
      async batch => {
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        await delay(20)
        inFlight--
        return batch.ids
      }
    )
    expect(acceptedIdsOf(result)).toHaveLength(20 * MAX_EVENTS_PER_REQUEST)
    expect(maxInFlight).toBe(CONCURRENT_BATCHES)
  })

  it('returns the ids in input order when batches complete out of order', async () => {
    let sent = 0
    const events = numberedEvents(12 * MAX_EVENTS_PER_REQUEST + 7)
    const result = await stream(inline(ndjson(events)), async batch => {
      await delay(Math.random() * 30)
      sent++
      return echoIds(batch)
    })
    expect(result.failure).toBeUndefined()
    expect(result.total).toBe(events.length)
    expect(acceptedIdsOf(result)).toEqual(events.map(event => event.id))
    expect(sent).toBe(13)
    expect(describePartialFailure(result)).toBe(`Sent all ${events.length} events.`)
  })

  it('on a failed batch, starts no new batch, lets the ones in flight finish and says what was not accepted', async () => {
    const failure = new ServiceError('POST /v2/stream failed with status 503 after 3 attempts.', {
      call: 'POST /v2/stream',
      kind: 'outage',
      status: 503
    })
    const started: number[] = []
    let fourthStarted: () => void = () => undefined
    const allFourStarted = new Promise<void>(resolve => (fourthStarted = resolve))
    const result = await stream(
      inline(ndjson(numberedEvents(10 * MAX_EVENTS_PER_REQUEST))),
      async batch => {
        started.push(batch.firstPosition)
        if (started.length === CONCURRENT_BATCHES) fourthStarted()
        await allFourStarted
        if (batch.firstPosition === 2 * MAX_EVENTS_PER_REQUEST) throw failure
        await delay(20)
        return batch.ids
      }
    )

    expect(started).toEqual([0, 1000, 2000, 3000])
    expect(result.total).toBe(10_000)
    const expectedIds = [
      ...numberedEvents(2000).map(event => event.id),
      ...numberedEvents(4000)
        .slice(3000)
        .map(event => event.id)
    ]
    expect(acceptedIdsOf(result)).toEqual(expectedIds)
    expect(result.failure).toEqual({
      error: failure,
      notSent: 'events 2001–3000, 4001–10000',
      acceptedCount: 3000
    })
    expect(describePartialFailure(result)).toBe(
      'Sent 3000 of 10000 events; events 2001–3000, 4001–10000 were not accepted: POST /v2/stream failed with status 503 after 3 attempts.'
    )
  })

  it('does not start a batch that was being read when another failed', async () => {
    const started: number[] = []
    const result = await stream(
      inline(ndjson(numberedEvents(8 * MAX_EVENTS_PER_REQUEST))),
      async batch => {
        started.push(batch.firstPosition)
        throw new Error('refused')
      }
    )
    expect(started).toEqual([0])
    expect(result.failure?.notSent).toBe('events 1–8000')
  })

  it('says "event" and "was" for a single event not accepted', async () => {
    const result = await stream(inline('{"name":"n","data":1}'), async () => {
      throw new Error('timed out')
    })
    expect(acceptedIdsOf(result)).toEqual([])
    expect(describePartialFailure(result)).toBe(
      'Sent 0 of 1 event; event 1 was not accepted: timed out'
    )
  })
})

describe('describePositions', () => {
  it('writes 1-based compact ranges', () => {
    expect(
      describePositions([
        [1000, 2000],
        [3000, 3500]
      ])
    ).toBe('events 1001–2000, 3001–3500')
    expect(describePositions([[4, 5]])).toBe('event 5')
    expect(
      describePositions([
        [4, 5],
        [6, 9]
      ])
    ).toBe('events 5, 7–9')
    expect(describePositions([])).toBe('no events')
  })
})

describe('large NDJSON files', () => {
  const COUNT = 100_000
  /** ~300-byte events with ids l1, l2, …, one per line. */
  function largeNdjson(count: number): string {
    const padding = 'p'.repeat(240)
    const lines: string[] = []
    for (let index = 1; index <= count; index++) {
      lines.push(`{"id":"l${index}","name":"load","data":{"n":${index},"padding":"${padding}"}}`)
    }
    return `${lines.join('\n')}\n`
  }

  it(`streams ${COUNT} events in batches of ${MAX_EVENTS_PER_REQUEST}, ids in order`, async () => {
    const source = file('large.ndjson', largeNdjson(COUNT))
    const started = Date.now()
    let batches = 0
    const result = await stream(source, async batch => {
      batches++
      expect(batch.ids).toHaveLength(MAX_EVENTS_PER_REQUEST)
      return batch.ids
    })
    expect(batches).toBe(COUNT / MAX_EVENTS_PER_REQUEST)
    expect(acceptedIdsOf(result)).toHaveLength(COUNT)
    expect(acceptedIdsOf(result)[0]).toBe('l1')
    expect(acceptedIdsOf(result)[COUNT - 1]).toBe(`l${COUNT}`)
    expect(acceptedIdsOf(result).every((id, index) => id === `l${index + 1}`)).toBe(true)
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('reads the file as batches are pulled, not before', async () => {
    const count = 20 * MAX_EVENTS_PER_REQUEST
    const content = largeNdjson(count)
    const path = join(dir, 'lazy.ndjson')
    writeFileSync(path, content)
    const batches = eventBatches(await validateEvents({ kind: 'file', path }))
    const first = await batches.next()
    expect((first.value as EventBatch).ids[0]).toBe('l1')

    // Cut the file after 5000 events: a reader that had loaded it whole would not notice.
    const kept = 5 * MAX_EVENTS_PER_REQUEST
    truncateSync(path, Buffer.byteLength(content.split('\n').slice(0, kept).join('\n')))
    const firstPositions: number[] = []
    await expect(async () => {
      for await (const batch of batches) firstPositions.push(batch.firstPosition)
    }).rejects.toThrow(`it now holds ${kept} events instead of ${count}`)
    expect(firstPositions).toEqual([1000, 2000, 3000])
  })

  it('refuses to send a file that changed after it was validated', async () => {
    const path = join(dir, 'changed.ndjson')
    writeFileSync(path, ndjson(numberedEvents(3)))
    const validated = await validateEvents({ kind: 'file', path })
    appendFileSync(path, `\n${JSON.stringify({ name: 'late', data: 1 })}`)
    const error = await eventBatches(validated)
      .next()
      .then(
        () => undefined,
        (thrown: unknown) => thrown
      )
    expect(error).toBeInstanceOf(EventsError)
    expect((error as EventsError).kind).toBe('changed')
    expect((error as EventsError).detail).toContain(
      'it was modified after its events were validated'
    )
  })
})

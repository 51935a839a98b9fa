/** Pass 2: request bodies cut as full as the limits allow, with generated ids. */
import { afterAll, describe, expect, it } from '@jest/globals'
import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import { BatchBuilder, type EventBatch } from '../../src/events/batches.ts'
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from '../../src/service/client.ts'
import {
  UUID,
  bodyText,
  collectBatches,
  eventOfBytes,
  idsInBody,
  inline,
  ndjson,
  numberedEvents,
  removeEventFiles
} from '../support/events.ts'

afterAll(removeEventFiles)

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
    expect(() => new BatchBuilder().add(Buffer.alloc(MAX_REQUEST_BYTES), 'a', false)).toThrow(
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

// Small limits, so that random inputs reach both of them often.
const limits = { maxEvents: 5, maxBytes: 60 }

type Line = { id: string; text: string; bytes: number }

function builtBatches(lines: Line[]): EventBatch[] {
  const builder = new BatchBuilder(limits.maxEvents, limits.maxBytes)
  const batches: EventBatch[] = []
  for (const line of lines) {
    const full = builder.add(Buffer.from(line.text), line.id, false)
    if (full !== undefined) batches.push(full)
  }
  const last = builder.finish()
  if (last !== undefined) batches.push(last)
  return batches
}

/** Lines of 1 to maxBytes bytes, some with multi-byte characters. */
const lineTexts = fc.array(
  fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀'), minLength: 0, maxLength: 20 }),
  { maxLength: 40 }
)

function linesOf(texts: string[]): Line[] {
  return texts
    .map((text, index) => ({ id: `e${index}`, text, bytes: Buffer.byteLength(text) + 1 }))
    .filter(line => line.bytes <= limits.maxBytes)
}

describe('BatchBuilder (property)', () => {
  it('keeps every event, in order, in batches within both limits, each as full as allowed', () => {
    fc.assert(
      fc.property(lineTexts, texts => {
        const lines = linesOf(texts)
        const batches = builtBatches(lines)

        expect(batches.flatMap(batch => batch.ids)).toEqual(lines.map(line => line.id))
        let position = 0
        for (const [index, batch] of batches.entries()) {
          const members = lines.slice(position, position + batch.ids.length)
          expect(batch.firstPosition).toBe(position)
          expect(batch.ids.length).toBeGreaterThan(0)
          expect(batch.ids.length).toBeLessThanOrEqual(limits.maxEvents)
          expect(batch.body.toString('utf8')).toBe(members.map(line => `${line.text}\n`).join(''))
          expect(batch.body.length).toBeLessThanOrEqual(limits.maxBytes)
          position += batch.ids.length
          // Greedy: the next event would have broken a limit.
          if (index < batches.length - 1) {
            expect(
              batch.ids.length === limits.maxEvents ||
                batch.body.length + lines[position].bytes > limits.maxBytes
            ).toBe(true)
          }
        }
        expect(position).toBe(lines.length)
      }),
      { numRuns: 200 }
    )
  })
})

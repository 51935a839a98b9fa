/** Sending the batches a few at a time, and saying which events were accepted when one fails. */
import { afterAll, describe, expect, it } from '@jest/globals'
import { Buffer } from 'node:buffer'
import {
  appendFileSync,
  openSync,
  closeSync,
  truncateSync,
  writeFileSync,
  writeSync
} from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { ServiceError } from '../../src/errors.ts'
import { AcceptedIds } from '../../src/events/accepted-ids.ts'
import { eventBatches, type EventBatch } from '../../src/events/batches.ts'
import { EventsError, MAX_LINE_BYTES } from '../../src/events/source.ts'
import { CONCURRENT_BATCHES, describePartialFailure } from '../../src/events/stream.ts'
import { validateEvents } from '../../src/events/validate.ts'
import { MAX_EVENTS_PER_REQUEST } from '../../src/service/client.ts'
import {
  acceptedIdsOf,
  echoIds,
  eventPath,
  file,
  inline,
  ndjson,
  numberedEvents,
  removeEventFiles,
  stream
} from '../support/events.ts'

afterAll(removeEventFiles)

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
  })

  it('on a failed batch, starts no new batch, lets the ones in flight finish and says what was not accepted', async () => {
    const failure = new ServiceError('POST /v2/stream failed with status 503 after 3 attempts.', {
      call: 'POST /v2/stream',
      kind: 'outage',
      status: 503
    })
    const started: number[] = []
    let fourthStarted: () => void = () => undefined
    const allFourStarted = new Promise<void>(resolve => {
      fourthStarted = resolve
    })
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
    expect(result.failure).toEqual({ error: failure })
    expect(describePartialFailure(result, failure.message)).toBe(
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
    expect(acceptedIdsOf(result)).toEqual([])
    expect(describePartialFailure(result, 'refused')).toBe(
      'Sent 0 of 8000 events; events 1–8000 were not accepted: refused'
    )
  })
})

describe('describePartialFailure', () => {
  /** Says what was not accepted of `total` events when the batches [first, count] were. */
  function described(total: number, ...batches: Array<[number, number]>): string {
    const accepted = new AcceptedIds()
    for (const [first, count] of batches) accepted.add(first, new Array<string>(count).fill('id'))
    return describePartialFailure({ total, accepted }, 'timed out')
  }

  it('names the events not accepted by 1-based compact ranges', () => {
    expect(described(3500, [0, 1000], [2000, 1000])).toBe(
      'Sent 2000 of 3500 events; events 1001–2000, 3001–3500 were not accepted: timed out'
    )
    expect(described(9, [5, 1], [0, 4])).toBe(
      'Sent 5 of 9 events; events 5, 7–9 were not accepted: timed out'
    )
    expect(described(1)).toBe('Sent 0 of 1 event; event 1 was not accepted: timed out')
    expect(described(2, [0, 2])).toBe('Sent all 2 events, then: timed out')
  })
})

describe('large NDJSON files', () => {
  // Enough batches to prove order across many; the bench streams 100,000.
  const COUNT = 20_000
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
  })

  it('reads the file as batches are pulled, not before', async () => {
    const count = 20 * MAX_EVENTS_PER_REQUEST
    const content = largeNdjson(count)
    const path = eventPath('lazy.ndjson')
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

  it('refuses a line that grew past the limit while the file was being sent, naming it', async () => {
    const count = 20 * MAX_EVENTS_PER_REQUEST
    const content = largeNdjson(count)
    const path = eventPath('grown-line.ndjson')
    writeFileSync(path, content)
    const batches = eventBatches(await validateEvents({ kind: 'file', path }))
    await batches.next()
    // Past what the first batch read: overwritten in place, so line `grown` loses its newline.
    const at = 4 * 1024 * 1024
    const grown = content.slice(0, at).split('\n').length
    const fd = openSync(path, 'r+')
    writeSync(fd, 'x'.repeat(MAX_LINE_BYTES + 1), at)
    closeSync(fd)
    await expect(async () => {
      for await (const batch of batches) void batch
    }).rejects.toThrow(`line ${grown} is no longer what was validated`)
  })

  it('refuses to send a file that changed after it was validated', async () => {
    const path = eventPath('changed.ndjson')
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

/** Sending the batches a few at a time, and saying which events were accepted when one fails. */
import { afterAll, describe, expect, it } from '@jest/globals'
import { Buffer } from 'node:buffer'
import { appendFileSync, truncateSync, writeFileSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { ServiceError } from '../../src/errors.ts'
import { eventBatches, type EventBatch } from '../../src/events/batches.ts'
import { EventsError } from '../../src/events/events-error.ts'
import {
  CONCURRENT_BATCHES,
  describePartialFailure,
  describePositions
} from '../../src/events/stream.ts'
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

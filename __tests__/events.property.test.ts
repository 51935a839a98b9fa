import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { MAX_EVENTS_PER_REQUEST, MAX_REQUEST_BYTES } from '../src/constants.ts'
import { batchLines, type EventBatch, type EventLine } from '../src/service/events.ts'

async function batchesOf(lines: EventLine[]): Promise<EventBatch[]> {
  const batches: EventBatch[] = []
  for await (const batch of batchLines(lines)) batches.push(batch)
  return batches
}

/** Lines whose byte sizes are chosen freely; the batching core trusts `bytes`. */
const lineSizes = fc.array(
  fc.oneof(
    fc.integer({ min: 1, max: 300 }),
    fc.integer({ min: 1, max: MAX_REQUEST_BYTES }),
    fc.constant(MAX_REQUEST_BYTES)
  ),
  { maxLength: 3 * MAX_EVENTS_PER_REQUEST }
)

function linesOf(sizes: number[]): EventLine[] {
  return sizes.map((bytes, index) => ({ id: `e${index}`, text: `${index}\n`, bytes }))
}

describe('batchLines (property)', () => {
  it('keeps every event, in order, in batches within both limits, each as full as allowed', async () => {
    await fc.assert(
      fc.asyncProperty(lineSizes, async sizes => {
        const lines = linesOf(sizes)
        const batches = await batchesOf(lines)

        expect(batches.flatMap(batch => batch.ids)).toEqual(lines.map(line => line.id))
        let position = 0
        for (const [index, batch] of batches.entries()) {
          const members = lines.slice(position, position + batch.ids.length)
          expect(batch.firstPosition).toBe(position)
          expect(batch.ids.length).toBeGreaterThan(0)
          expect(batch.ids.length).toBeLessThanOrEqual(MAX_EVENTS_PER_REQUEST)
          expect(batch.bytes).toBe(members.reduce((sum, line) => sum + line.bytes, 0))
          expect(batch.bytes).toBeLessThanOrEqual(MAX_REQUEST_BYTES)
          expect(batch.body).toBe(members.map(line => line.text).join(''))
          position += batch.ids.length
          // Greedy: the next event would have broken a limit.
          const next = lines[position]
          if (index < batches.length - 1) {
            expect(
              batch.ids.length === MAX_EVENTS_PER_REQUEST ||
                batch.bytes + next.bytes > MAX_REQUEST_BYTES
            ).toBe(true)
          }
        }
        expect(position).toBe(lines.length)
      }),
      { numRuns: 200 }
    )
  })
})

import { describe, expect, it } from '@jest/globals'
import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import { BatchBuilder, type EventBatch } from '../../src/events/batches.ts'
import type { EventLine } from '../../src/events/event.ts'

// Small limits, so that random inputs reach both of them often.
const limits = { maxEvents: 5, maxBytes: 60 }

function batchesOf(lines: EventLine[]): EventBatch[] {
  const builder = new BatchBuilder(limits)
  const batches: EventBatch[] = []
  for (const line of lines) {
    const full = builder.add(line)
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

function linesOf(texts: string[]): EventLine[] {
  return texts
    .map((text, index) => ({ id: `e${index}`, parts: [text], bytes: Buffer.byteLength(text) + 1 }))
    .filter(line => line.bytes <= limits.maxBytes)
}

describe('BatchBuilder (property)', () => {
  it('keeps every event, in order, in batches within both limits, each as full as allowed', () => {
    fc.assert(
      fc.property(lineTexts, texts => {
        const lines = linesOf(texts)
        const batches = batchesOf(lines)

        expect(batches.flatMap(batch => batch.ids)).toEqual(lines.map(line => line.id))
        let position = 0
        for (const [index, batch] of batches.entries()) {
          const members = lines.slice(position, position + batch.ids.length)
          expect(batch.firstPosition).toBe(position)
          expect(batch.ids.length).toBeGreaterThan(0)
          expect(batch.ids.length).toBeLessThanOrEqual(limits.maxEvents)
          expect(batch.body.toString('utf8')).toBe(
            members.map(line => `${line.parts.join('')}\n`).join('')
          )
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
      { numRuns: 500 }
    )
  })
})

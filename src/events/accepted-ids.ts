import { Buffer } from 'node:buffer'

type AcceptedBatch = { firstPosition: number; count: number; json: Buffer }

/**
 * The ids the service accepted, batch by batch: batches may be accepted out of order, and the
 * ids are written in input order. Each batch's ids are kept as JSON array elements in one buffer,
 * outside the JavaScript heap.
 */
export class AcceptedIds {
  private readonly parts: AcceptedBatch[] = []
  count = 0

  add(firstPosition: number, ids: readonly string[]): void {
    const json = Buffer.from(ids.map(id => JSON.stringify(id)).join(','), 'utf8')
    this.parts.push({ firstPosition, count: ids.length, json })
    this.count += ids.length
  }

  /** The accepted batches, in input order. */
  batches(): readonly AcceptedBatch[] {
    return this.parts.sort((a, b) => a.firstPosition - b.firstPosition)
  }

  /**
   * The ids as one JSON array, a line per batch (JSON allows a newline between elements), so
   * that 100,000 ids are never one string.
   */
  *jsonLines(): Generator<string> {
    const parts = this.batches()
    if (parts.length === 0) yield '[]'
    for (const [i, { json }] of parts.entries()) {
      yield `${i === 0 ? '[' : ''}${json.toString('utf8')}${i === parts.length - 1 ? ']' : ','}`
    }
  }
}

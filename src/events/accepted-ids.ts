import { Buffer } from 'node:buffer'

/**
 * The ids the service accepted, batch by batch: batches may be accepted out of order, and the
 * ids are written in input order. Each batch's ids are kept as JSON array elements in one buffer,
 * outside the JavaScript heap.
 */
export class AcceptedIds {
  private readonly parts: Array<{ firstPosition: number; count: number; json: Buffer }> = []
  private sorted = true
  count = 0

  add(firstPosition: number, ids: readonly string[]): void {
    const last = this.parts[this.parts.length - 1]
    if (last !== undefined && last.firstPosition > firstPosition) this.sorted = false
    const json = Buffer.from(ids.map(id => JSON.stringify(id)).join(','), 'utf8')
    this.parts.push({ firstPosition, count: ids.length, json })
    this.count += ids.length
  }

  /** The accepted batches' positions, in input order. */
  batches(): ReadonlyArray<{ firstPosition: number; count: number }> {
    if (!this.sorted) {
      this.parts.sort((a, b) => a.firstPosition - b.firstPosition)
      this.sorted = true
    }
    return this.parts
  }

  /**
   * The ids as one JSON array, a line per batch (JSON allows a newline between elements), so
   * that 100,000 ids are never one string.
   */
  *jsonLines(): Generator<string> {
    const parts = this.batches() as typeof this.parts
    if (parts.length === 0) yield '[]'
    for (let i = 0; i < parts.length; i++) {
      const open = i === 0 ? '[' : ''
      const close = i === parts.length - 1 ? ']' : ','
      yield `${open}${parts[i].json.toString('utf8')}${close}`
    }
  }
}

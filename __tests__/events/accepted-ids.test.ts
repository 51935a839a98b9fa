import { describe, expect, it } from '@jest/globals'
import { AcceptedIds } from '../../src/events/accepted-ids.ts'

function parsed(accepted: AcceptedIds): unknown {
  return JSON.parse([...accepted.jsonLines()].join('\n'))
}

describe('AcceptedIds', () => {
  it('writes no ids as []', () => {
    expect([...new AcceptedIds().jsonLines()]).toEqual(['[]'])
  })

  it('keeps input order when batches are accepted out of order, and escapes ids', () => {
    const accepted = new AcceptedIds()
    accepted.add(3, ['c,d'])
    accepted.add(0, ['a"b', 'x', 'line\nbreak'])
    expect(accepted.count).toBe(4)
    expect(parsed(accepted)).toEqual(['a"b', 'x', 'line\nbreak', 'c,d'])
    expect(
      accepted.batches().map(({ firstPosition, count }) => ({ firstPosition, count }))
    ).toEqual([
      { firstPosition: 0, count: 3 },
      { firstPosition: 3, count: 1 }
    ])
  })

  it('writes one line per batch, never all ids in one string', () => {
    const accepted = new AcceptedIds()
    const ids = Array.from({ length: 2500 }, (_, index) => `evt-${index}`)
    for (let start = 0; start < ids.length; start += 1000) {
      accepted.add(start, ids.slice(start, start + 1000))
    }
    const lines = [...accepted.jsonLines()]
    expect(lines).toHaveLength(3)
    expect(lines.every(line => !line.includes('\n'))).toBe(true)
    expect(parsed(accepted)).toEqual(ids)
  })
})

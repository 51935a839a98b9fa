import { describe, expect, it } from '@jest/globals'
import { MAX_CHANGES_IN_FLIGHT, runAll } from '../../src/helpers/send-all.ts'

/** A promise settled from outside, to decide the order in which tasks finish. */
function deferred<T>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>(resolve => setImmediate(resolve))

describe('runAll', () => {
  it('never has more than the limit in flight, and starts the next task as soon as one ends', async () => {
    const items = Array.from({ length: 10 }, (_, i) => i)
    const pending = items.map(() => deferred<number>())
    const started: number[] = []
    let inFlight = 0
    let mostInFlight = 0
    const run = runAll(items, 3, async item => {
      started.push(item)
      inFlight++
      mostInFlight = Math.max(mostInFlight, inFlight)
      try {
        return await pending[item].promise
      } finally {
        inFlight--
      }
    })
    await settle()
    expect(started).toEqual([0, 1, 2])
    pending[1].resolve(1)
    await settle()
    expect(started).toEqual([0, 1, 2, 3])
    // Finish the rest in reverse order, one at a time.
    for (const item of [...items].reverse()) {
      pending[item].resolve(item * 10)
      await settle()
    }
    const results = await run
    expect(mostInFlight).toBe(3)
    expect(started).toEqual(items)
    // Results in input order, whatever the order of completion.
    expect(results).toEqual(items.map(i => ({ ok: true, value: i === 1 ? 1 : i * 10 })))
  })

  it('runs every task when some fail, rejecting or throwing before any await', async () => {
    const boom = new Error('POST /v1/changes: 500')
    const ran: string[] = []
    const results = await runAll(['api', 'web', 'docs', 'jobs'], 2, (name, index) => {
      ran.push(name)
      if (name === 'web') return Promise.reject(boom)
      if (name === 'docs') throw new TypeError('not even a promise')
      return Promise.resolve(`${name}#${index}`)
    })
    expect(ran).toEqual(['api', 'web', 'docs', 'jobs'])
    expect(results[0]).toEqual({ ok: true, value: 'api#0' })
    expect(results[1]).toEqual({ ok: false, error: boom })
    expect(results[2]).toMatchObject({ ok: false, error: expect.any(TypeError) })
    expect(results[3]).toEqual({ ok: true, value: 'jobs#3' })
  })

  it('handles fewer items than the limit, and none', async () => {
    expect(await runAll([7], MAX_CHANGES_IN_FLIGHT, async n => n + 1)).toEqual([
      { ok: true, value: 8 }
    ])
    expect(await runAll([], MAX_CHANGES_IN_FLIGHT, async () => 1)).toEqual([])
  })

  it.each([0, -1, 1.5, NaN])('refuses the limit %p', async limit => {
    await expect(runAll([1], limit, async n => n)).rejects.toThrow(RangeError)
  })
})

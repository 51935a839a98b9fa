/**
 * The sender over a real state folder, with the service's answers given in turn: the order, the
 * backoff and its bounds, the rejected key said once, and what is dropped and counted.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DeployChange } from '../../src/serve/deploys.ts'
import type { Notification } from '../../src/serve/notifications.ts'
import type { Recorded } from '../../src/serve/record.ts'
import { sendWaiting } from '../../src/serve/sender.ts'
import { Metrics } from '../../src/serve/server.ts'
import { StateFolder } from '../../src/serve/state.ts'

const DAY_MS = 24 * 60 * 60_000

function change(key: string): DeployChange {
  const notification = {
    controller: 'flux',
    deployKey: key,
    object: `Kustomization/apps/${key}`,
    service: key,
    outcome: 'success'
  } as Notification
  return { key, notification }
}

let dir: string
let state: StateFolder
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cta-sender-'))
  // Each input is the changes it adds.
  state = await StateFolder.open(dir, (memory, input) => ({
    memory: { ...memory },
    changes: input as DeployChange[]
  }))
})
afterEach(async () => {
  await state.close()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * A sender whose service gives `answers` in turn, then stops it: the keys it was asked to
 * record, the waits it slept, what it logged and counted. `now` is the clock it reads.
 */
async function sendAll(answers: Recorded[], now = 0) {
  const asked: string[] = []
  const slept: number[] = []
  const lines: Array<[string, string]> = []
  const metrics = new Metrics()
  const stopping = new AbortController()
  const sending = {
    state,
    log: (level: string, message: string) => lines.push([level, message]),
    metrics,
    record: async ({ key }: DeployChange) => {
      asked.push(key)
      const answer = answers.shift()!
      if (answers.length === 0) stopping.abort()
      return answer
    },
    policy: { clock: () => now, sleep: async (ms: number) => slept.push(ms) }
  }
  await sendWaiting(sending, stopping.signal)
  return { asked, slept, lines, metrics }
}

const sent = (id: string): Recorded => ({ sent: id })
const down: Recorded = { wait: 'POST /v2/change failed with HTTP 503.', keyRejected: false }
const rejectedKey: Recorded = { wait: 'The service rejected the API key.', keyRejected: true }

describe('the sender', () => {
  it('records the waiting changes in the order they were accepted, each once', async () => {
    await state.update([change('a'), change('b')], 0)
    await state.update([change('c')], 0)
    const { asked, lines, metrics } = await sendAll([sent('1'), sent('2'), sent('3')])
    expect(asked).toEqual(['a', 'b', 'c'])
    expect(state.waitingCount).toBe(0)
    expect(metrics.recorded).toBe(3)
    expect(lines[0]).toEqual(['info', 'Recorded change 1: flux Kustomization/apps/a (a, success).'])
  })

  it('keeps the oldest waiting while the service is down, backing off from 1 s to 5 min', async () => {
    await state.update([change('a'), change('b')], 0)
    const answers = [...new Array<Recorded>(12).fill(down), sent('1')]
    const { asked, slept, lines } = await sendAll(answers)
    expect(asked).toEqual([...new Array<string>(13).fill('a')])
    expect(slept).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map(s => s * 1000))
    expect(lines[0]).toEqual([
      'warn',
      'POST /v2/change failed with HTTP 503. 2 changes wait; the next attempt is in 1 s.'
    ])
    expect(state.waitingCount).toBe(1)
  })

  it('says a rejected key once, loudly, and drops nothing', async () => {
    await state.update([change('a')], 0)
    const { lines, metrics } = await sendAll([rejectedKey, rejectedKey, rejectedKey, sent('1')])
    expect(lines.filter(([level]) => level === 'error')).toEqual([
      [
        'error',
        'The service rejected the API key. Nothing is dropped: 1 change wait until the key is accepted.'
      ]
    ])
    expect(metrics.recorded).toBe(1)
    expect(metrics.dropped).toEqual({ refused: 0, expired: 0 })
  })

  it('drops a change the service refuses, with its words, and goes on', async () => {
    await state.update([change('a'), change('b')], 0)
    const refused = { drop: 'POST /v2/change was rejected with HTTP 400: version is too long.' }
    const { asked, lines, metrics } = await sendAll([refused, sent('2')])
    expect(asked).toEqual(['a', 'b'])
    expect(lines[0]).toEqual([
      'error',
      `Dropped the change of flux Kustomization/apps/a (a, success): ${refused.drop}`
    ])
    expect(metrics.dropped.refused).toBe(1)
    expect(state.waitingCount).toBe(0)
  })

  it('drops a change not recorded within a day of being accepted, unsent', async () => {
    await state.update([change('old')], 0)
    await state.update([change('new')], DAY_MS)
    const { asked, lines, metrics } = await sendAll([sent('2')], DAY_MS + 1)
    expect(asked).toEqual(['new'])
    expect(lines[0][1]).toBe(
      'Dropped the change of flux Kustomization/apps/old (old, success): it was not recorded within 24 h of 1970-01-01T00:00:00.000Z.'
    )
    expect(metrics.dropped.expired).toBe(1)
  })

  it('waits for a change to arrive, and stops after the one it sends', async () => {
    const metrics = new Metrics()
    const stopping = new AbortController()
    let asked: () => void = () => {}
    const recording = new Promise<void>(resolve => {
      asked = resolve
    })
    const record = async () => {
      asked()
      return sent('1')
    }
    const sending = sendWaiting({ state, log: () => {}, metrics, record }, stopping.signal)
    await state.update([change('a')], Date.now())
    await recording
    stopping.abort()
    await sending
    expect(metrics.recorded).toBe(1)
    expect(state.waitingCount).toBe(0)
  })
})

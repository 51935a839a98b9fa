import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import {
  emptyMemory,
  expire,
  HEALTH_WAIT_MS,
  KEY_RETENTION_MS,
  MAX_OBJECTS,
  MAX_RECORDED_KEYS,
  MAX_WAITING_DEPLOYS,
  memoryFromJson,
  memoryToJson,
  receive,
  RUNNING_WAIT_MS,
  type Applied,
  type DeployChange,
  type DeployMemory,
  type MemoryJson,
  type Succeeded
} from '../../src/serve/deploys.ts'
import { readNotification, type Notification } from '../../src/serve/notifications.ts'

const FIXTURES = new URL('../fixtures/gitops/', import.meta.url)

/** The notification of a recorded body, with the values at these dotted paths replaced. */
function notification(name: string, changes: Record<string, unknown> = {}): Notification {
  const body = JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as unknown
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split('.')
    const parent = keys
      .slice(0, -1)
      .reduce((object, key) => (object as Record<string, unknown>)[key], body)
    ;(parent as Record<string, unknown>)[keys.at(-1)!] = value
  }
  const result = readNotification(name.startsWith('argocd') ? 'argocd' : 'flux', body)
  if (!('notification' in result)) throw new Error(`${name}: ${JSON.stringify(result)}`)
  return result.notification
}

/**
 * A receiver's memory between calls: written as JSON and read back, as the state folder keeps it.
 * Each call changes it in place, and says truly whether it did: a repeat leaves it as it was.
 */
class Receiver {
  memory: DeployMemory = emptyMemory()
  changes: DeployChange[] = []

  receive(notification: Notification, now: number): DeployChange[] {
    return this.step(memory => receive(memory, notification, now))
  }

  expire(now: number): DeployChange[] {
    return this.step(memory => expire(memory, now))
  }

  private step(apply: (memory: DeployMemory) => Applied): DeployChange[] {
    const stored = JSON.stringify(memoryToJson(this.memory))
    this.memory = memoryFromJson(JSON.parse(stored) as MemoryJson)
    const { changed, changes } = apply(this.memory)
    expect(JSON.stringify(memoryToJson(this.memory)) !== stored).toBe(changed)
    this.changes.push(...changes)
    return changes
  }
}

/** A Map that counts its work: each lookup or change, and each step through its entries. */
class CountingMap<K, V> extends Map<K, V> {
  // Set once the constructor has filled the map: its filling is no work of a step.
  work = 0

  override has(key: K): boolean {
    this.work++
    return super.has(key)
  }

  override get(key: K): V | undefined {
    this.work++
    return super.get(key)
  }

  override set(key: K, value: V): this {
    this.work++
    return super.set(key, value)
  }

  override delete(key: K): boolean {
    this.work++
    return super.delete(key)
  }

  override forEach(each: (value: V, key: K, map: Map<K, V>) => void): void {
    for (const [key, value] of this) each(value, key, this)
  }

  override keys(): MapIterator<K> {
    return this.counted(super.keys())
  }

  override values(): MapIterator<V> {
    return this.counted(super.values())
  }

  override entries(): MapIterator<[K, V]> {
    return this.counted(super.entries())
  }

  override [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries()
  }

  private counted<T>(iterator: MapIterator<T>): MapIterator<T> {
    const next = iterator.next.bind(iterator)
    iterator.next = () => {
      this.work++
      return next()
    }
    return iterator
  }
}

const SECOND = 1000
const DAY = 24 * 60 * 60 * SECOND
/** Just after the shop's sync of 2025-03-10 started. */
const T0 = Date.parse('2025-03-10T09:14:10Z')

const RUNNING = notification('argocd-sync-running')
const PROGRESSING = notification('argocd-sync-progressing')
const HEALTHY = notification('argocd-sync-healthy')

/** Every order of the items. */
function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items]
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map(rest => [item, ...rest])
  )
}

/** Sends each notification in turn, a second apart from `start`, then lets every wait end. */
function sendAll(notifications: Notification[], start = T0): Receiver {
  const receiver = new Receiver()
  notifications.forEach((sent, index) => receiver.receive(sent, start + index * SECOND))
  receiver.expire(start + 2 * RUNNING_WAIT_MS)
  return receiver
}

const fiveTimes = <T>(items: T[]): T[] => items.flatMap(item => Array<T>(5).fill(item))

describe('one change per Argo CD deploy', () => {
  const orders = permutations([RUNNING, PROGRESSING, HEALTHY])
  const named = orders.map((order): [string, Notification[]] => [
    order.map(({ stage }) => stage).join(', '),
    order
  ])
  it.each(named)(
    '%s, each sent five times, in a row or in turn: one change, at its first final state',
    (_, order) => {
      for (const sent of [fiveTimes(order), [...order, ...order, ...order, ...order, ...order]]) {
        const { changes } = sendAll(sent)
        expect(changes).toEqual([{ key: HEALTHY.deployKey, notification: HEALTHY }])
      }
    }
  )

  it('a terminated sync: its first final word is the one recorded', () => {
    const terminating = notification('argocd-sync-terminating')
    const terminated = notification('argocd-sync-terminated')
    const { changes } = sendAll(fiveTimes([terminating, terminated]))
    expect(changes.map(change => change.notification)).toEqual([terminating])
    expect(changes[0].notification.outcome).toBe('cancelled')
  })

  it('two deploys of one app, their notifications interleaved: two changes', () => {
    const failed = notification('argocd-sync-failed')
    const { changes } = sendAll([RUNNING, failed, PROGRESSING, failed, HEALTHY, failed, HEALTHY])
    expect(changes.map(({ notification }) => [notification.version, notification.outcome])).toEqual(
      [
        [failed.version, 'failure'],
        [HEALTHY.version, 'success']
      ]
    )
  })

  it('a sync of the revision last recorded as a success records nothing, unless it fails', () => {
    const resync = (startedAt: string, health: string) =>
      notification('argocd-sync-healthy', {
        'app.status.operationState.startedAt': startedAt,
        'app.status.health.status': health
      })
    const selfHeal = resync('2025-03-10T11:00:00Z', 'Healthy')
    const { changes } = sendAll([HEALTHY, selfHeal, resync('2025-03-10T12:00:00Z', 'Degraded')])
    expect(changes.map(({ key }) => key)).toEqual([
      HEALTHY.deployKey,
      'argocd/shop@2025-03-10T12:00:00.000Z'
    ])
  })

  it('a rollback is recorded, even to the revision last recorded as a success', () => {
    const rollback = notification('argocd-rollback')
    const degraded = notification('argocd-sync-degraded')
    const { changes } = sendAll([HEALTHY, degraded, rollback, rollback])
    expect(changes.map(({ notification }) => notification)).toEqual([HEALTHY, degraded, rollback])
    expect(rollback).toMatchObject({ version: HEALTHY.version, rollback: true })
  })

  it('a sync that succeeded waits ten minutes for healthy resources, then is recorded, health unknown', () => {
    const receiver = new Receiver()
    expect(receiver.receive(PROGRESSING, T0)).toEqual([])
    // Its repeat does not prolong the wait.
    expect(receiver.receive(PROGRESSING, T0 + 5 * 60 * SECOND)).toEqual([])
    expect(receiver.expire(T0 + HEALTH_WAIT_MS - 1)).toEqual([])
    expect(receiver.expire(T0 + HEALTH_WAIT_MS)).toEqual([
      {
        key: PROGRESSING.deployKey,
        notification: {
          ...PROGRESSING,
          stage: 'final',
          outcome: 'success',
          status: 'Succeeded, health unknown'
        }
      }
    ])
    // Healthy at last, too late: the deploy is recorded.
    expect(receiver.receive(HEALTHY, T0 + HEALTH_WAIT_MS + SECOND)).toEqual([])
  })

  it('a sync running with no end for an hour is recorded, outcome unknown', () => {
    const receiver = new Receiver()
    receiver.receive(RUNNING, T0)
    expect(receiver.expire(T0 + RUNNING_WAIT_MS - 1)).toEqual([])
    expect(receiver.expire(T0 + RUNNING_WAIT_MS)).toEqual([
      {
        key: RUNNING.deployKey,
        notification: {
          ...RUNNING,
          stage: 'final',
          outcome: 'unknown',
          status: 'Running, no end seen'
        }
      }
    ])
  })

  it("a sync's success ends the hour's wait with the ten minutes' wait; a Running after it changes nothing", () => {
    const receiver = new Receiver()
    receiver.receive(RUNNING, T0)
    receiver.receive(PROGRESSING, T0 + 55 * 60 * SECOND)
    receiver.receive(RUNNING, T0 + 56 * 60 * SECOND)
    expect(receiver.expire(T0 + RUNNING_WAIT_MS)).toEqual([])
    const [change] = receiver.expire(T0 + 55 * 60 * SECOND + HEALTH_WAIT_MS)
    expect(change.notification).toMatchObject({ outcome: 'success', version: HEALTHY.version })
  })

  it('keys are kept seven days, and a deploy older than that records nothing', () => {
    const failed = notification('argocd-sync-failed')
    const receiver = new Receiver()
    const start = failed.startedAt!
    expect(receiver.receive(failed, start)).toHaveLength(1)
    expect(receiver.receive(failed, start + KEY_RETENTION_MS - 1)).toEqual([])
    receiver.expire(start + KEY_RETENTION_MS)
    expect(receiver.memory.recorded.size).toBe(0)
    expect(receiver.receive(failed, start + KEY_RETENTION_MS + 1)).toEqual([])
  })
})

describe('one change per Flux deploy', () => {
  const succeeded = notification('flux-kustomization-succeeded')
  const failed = notification('flux-kustomization-failed')

  it('a success repeated at every interval for a month gives one change', () => {
    const receiver = new Receiver()
    for (let now = T0; now < T0 + 30 * DAY; now += 10 * 60 * SECOND) {
      receiver.receive(succeeded, now)
      // Keys older than seven days go; the object still knows what runs.
      if ((now - T0) % DAY === 0) receiver.expire(now)
    }
    expect(receiver.changes).toEqual([
      { key: `${succeeded.deployKey}#success`, notification: succeeded }
    ])
  })

  it("a revision's failure, then its success: two changes; their repeats, none", () => {
    const retried = notification('flux-kustomization-succeeded', {
      'metadata.revision': failed.metadata.revision
    })
    const { changes } = sendAll([...fiveTimes([failed]), ...fiveTimes([retried])])
    expect(changes.map(({ notification }) => notification.outcome)).toEqual(['failure', 'success'])
  })

  it('the previous deploy is the last revision recorded as a success for the object', () => {
    const receiver = new Receiver()
    receiver.receive(succeeded, T0)
    const [change] = receiver.receive(failed, T0 + SECOND)
    expect(change.notification.previousVersion).toBe(succeeded.version)
    // A failure is no deploy to come after; another object has its own.
    const again = { ...failed, deployKey: `${failed.deployKey}-again` }
    const other = { ...failed, deployKey: 'other@x', object: 'Kustomization/flux-system/other' }
    const [second, third] = [again, other].flatMap(sent => receiver.receive(sent, T0 + SECOND))
    expect(second.notification.previousVersion).toBe(succeeded.version)
    expect(third.notification.previousVersion).toBeUndefined()
  })

  it("a HelmRelease's install, upgrade and upgrade rolled back: one change each", () => {
    const releases = [
      'flux-helmrelease-install-failed',
      'flux-helmrelease-install-succeeded',
      'flux-helmrelease-upgrade-succeeded',
      'flux-helmrelease-upgrade-failed',
      'flux-helmrelease-rollback-succeeded'
    ].map(name => notification(name))
    const { changes } = sendAll(fiveTimes(releases))
    expect(
      changes.map(({ notification }) => [notification.status, notification.previousVersion])
    ).toEqual([
      ['InstallFailed', undefined],
      ['InstallSucceeded', undefined],
      ['UpgradeSucceeded', '1.4.0'],
      ['UpgradeFailed', '1.5.0'],
      // Back to what ran before the failed upgrade.
      ['RollbackSucceeded', undefined]
    ])
  })

  it('a second rollback to the same release, later, is news', () => {
    const rollback = notification('flux-helmrelease-rollback-succeeded')
    const later = { ...rollback, finishedAt: rollback.finishedAt! + DAY }
    expect(sendAll([rollback, rollback, later, later]).changes).toHaveLength(2)
  })

  it("a Helm release's new values, with the same chart version, are a new deploy", () => {
    const installed = notification('flux-helmrelease-install-succeeded')
    const values = notification('flux-helmrelease-install-succeeded', {
      reason: 'UpgradeSucceeded',
      'metadata.token': `sha256:${'0'.repeat(64)}`
    })
    expect(sendAll([installed, values, installed]).changes).toHaveLength(2)
  })
})

describe('the memory stays bounded', () => {
  const running = (app: number) => ({
    ...RUNNING,
    deployKey: `argocd/app-${app}@x`,
    object: `argocd/app-${app}`
  })
  const waitingAtBound = () =>
    Array.from({ length: MAX_WAITING_DEPLOYS }, (_, app) => ({
      key: `argocd/app-${app}@x`,
      notification: running(app),
      until: T0 + RUNNING_WAIT_MS
    }))
  const keysAtBound = () =>
    Array.from({ length: MAX_RECORDED_KEYS }, (_, index): [string, number] => [
      `key-${index}`,
      T0 + index
    ])
  const objectsAtBound = () =>
    Array.from({ length: MAX_OBJECTS }, (_, index): [string, Succeeded] => [
      `ns/app-${index}`,
      { running: 'r' }
    ])

  it('past the waiting bound, the deploy waiting longest is recorded as it stands', () => {
    const memory = { ...emptyMemory(), waiting: waitingAtBound() }
    const { changes } = receive(memory, running(MAX_WAITING_DEPLOYS), T0)
    expect(memory.waiting).toHaveLength(MAX_WAITING_DEPLOYS)
    expect(changes).toEqual([
      {
        key: 'argocd/app-0@x',
        notification: expect.objectContaining({ object: 'argocd/app-0', outcome: 'unknown' })
      }
    ])
  })

  it('past the key bound, the oldest keys go first', () => {
    const memory = { ...emptyMemory(), recorded: new Map(keysAtBound()) }
    receive(memory, HEALTHY, T0 + DAY)
    const keys = [...memory.recorded.keys()]
    expect(keys).toHaveLength(MAX_RECORDED_KEYS)
    expect(keys[0]).toBe('key-1')
    expect(keys.at(-1)).toBe(HEALTHY.deployKey)
  })

  it('past the object bound, the least recently deployed go first', () => {
    const memory = { ...emptyMemory(), succeeded: new Map(objectsAtBound()) }
    receive(memory, HEALTHY, T0)
    const objects = [...memory.succeeded]
    expect(objects).toHaveLength(MAX_OBJECTS)
    expect(objects[0][0]).toBe('ns/app-1')
    expect(objects.at(-1)).toEqual([
      HEALTHY.object,
      { running: HEALTHY.version, version: HEALTHY.version }
    ])
  })

  it('a notification costs the same whatever the memory holds: at the bounds, a few lookups', () => {
    const recorded = new CountingMap(keysAtBound())
    const succeeded = new CountingMap(objectsAtBound())
    const memory = { waiting: waitingAtBound(), recorded, succeeded }
    const { changed, changes } = receive(memory, HEALTHY, T0 + DAY)
    expect({ changed, changes }).toEqual({
      changed: true,
      changes: [{ key: HEALTHY.deployKey, notification: HEALTHY }]
    })
    expect([recorded.size, succeeded.size]).toEqual([MAX_RECORDED_KEYS, MAX_OBJECTS])
    // Its key and object looked up and set, and the oldest of each dropped: no walk through all.
    expect(recorded.work).toBeLessThanOrEqual(6)
    expect(succeeded.work).toBeLessThanOrEqual(6)
    // A repeat looks its key up, and stops.
    expect(receive(memory, HEALTHY, T0 + DAY)).toEqual({ changed: false, changes: [] })
  })
})

/**
 * Notifications -> one change per deploy, whatever their number and order: a deploy is recorded
 * once, at its first final state. The caller passes the time and keeps the memory, which a step
 * changes in place: a notification costs the same whatever the memory holds.
 */
import type { Notification } from './notifications.ts'

export const HEALTH_WAIT_MS = 10 * 60 * 1000
export const RUNNING_WAIT_MS = 60 * 60 * 1000
/** How long a key is kept, and so how old a deploy may be to be recorded. */
export const KEY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
/** Past it, the deploy waiting longest is recorded as it stands. */
export const MAX_WAITING_DEPLOYS = 1000
/** Past it, the oldest go (a repeat of such a deploy is then judged by its object). */
export const MAX_RECORDED_KEYS = 20_000
/** Past it, the least recently deployed go. */
export const MAX_OBJECTS = 10_000

/** What an object's last recorded success left running, and its version. */
export interface Succeeded {
  running: string
  version?: string
}

/** Each part oldest first (a Map's order is its insertion order). */
export interface DeployMemory {
  /** Argo CD deploys not yet final: the furthest word of each, and when its wait ends. */
  waiting: { key: string; notification: Notification; until: number }[]
  /** Each key recorded (or found to record nothing), and when. */
  recorded: Map<string, number>
  /** By object, its last recorded success: the most recently deployed last. */
  succeeded: Map<string, Succeeded>
}

/** The memory as the state folder's snapshot keeps it: each Map as its entries. */
export type MemoryJson = {
  waiting: DeployMemory['waiting']
  recorded: [string, number][]
  succeeded: [string, Succeeded][]
}

/** A final notification to record, and its key (the deploy's, with Flux's outcome). */
export interface DeployChange {
  key: string
  notification: Notification
}

/** What a step did: whether it changed the memory (a repeat does not), and what it made final. */
export interface Applied {
  changed: boolean
  changes: DeployChange[]
}

export const emptyMemory = (): DeployMemory => ({
  waiting: [],
  recorded: new Map(),
  succeeded: new Map()
})

export const memoryToJson = ({ waiting, recorded, succeeded }: DeployMemory): MemoryJson => ({
  waiting,
  recorded: [...recorded],
  succeeded: [...succeeded]
})

export const memoryFromJson = ({ waiting, recorded, succeeded }: MemoryJson): DeployMemory => ({
  waiting,
  recorded: new Map(recorded),
  succeeded: new Map(succeeded)
})

/** A notification in: the changes it makes final (none for a repeat, which touches nothing). */
export function receive(memory: DeployMemory, notification: Notification, now: number): Applied {
  const key = changeKey(notification)
  // Older than its key would be kept: it cannot be told from a repeat.
  const tooOld = (notification.startedAt ?? now) < now - KEY_RETENTION_MS
  if (tooOld || memory.recorded.has(key)) return { changed: false, changes: [] }
  const changes: DeployChange[] = []
  if (notification.stage === 'final') changes.push(...settle(memory, key, notification, now))
  else if (!wait(memory, key, notification, now)) return { changed: false, changes: [] }
  for (const oldest of memory.waiting.slice(0, -MAX_WAITING_DEPLOYS)) {
    changes.push(...settle(memory, oldest.key, ended(oldest.notification), now))
  }
  dropOldest(memory.recorded, MAX_RECORDED_KEYS)
  dropOldest(memory.succeeded, MAX_OBJECTS)
  return { changed: true, changes }
}

/** Deploys whose wait ended, as they stand; keys past their retention dropped. */
export function expire(memory: DeployMemory, now: number): Applied {
  let changed = false
  // Oldest first: the keys past their retention lead.
  for (const [key, at] of memory.recorded) {
    if (at > now - KEY_RETENTION_MS) break
    memory.recorded.delete(key)
    changed = true
  }
  const changes: DeployChange[] = []
  for (const { key, notification, until } of memory.waiting) {
    if (until > now) continue
    changes.push(...settle(memory, key, ended(notification), now))
    changed = true
  }
  return { changed, changes }
}

/**
 * Argo CD's deploy key. Flux's with how it ended: a deploy's first failure and its first success
 * are both news; a rollback is news each time, so its key says when.
 */
function changeKey(notification: Notification): string {
  const { controller, deployKey, rollback, outcome, finishedAt } = notification
  if (controller === 'argocd') return deployKey
  return rollback ? `${deployKey}#rollback@${finishedAt ?? ''}` : `${deployKey}#${outcome}`
}

/**
 * Keeps a deploy not yet final; a later word never undoes a further one (Running after
 * Progressing). False when the word adds nothing.
 */
function wait(memory: DeployMemory, key: string, notification: Notification, now: number) {
  const index = memory.waiting.findIndex(entry => entry.key === key)
  const earlier = memory.waiting[index]
  const undoes = earlier?.notification.stage === 'progressing' || notification.stage === 'running'
  if (earlier && undoes) return false
  const delay = notification.stage === 'progressing' ? HEALTH_WAIT_MS : RUNNING_WAIT_MS
  const entry = { key, notification, until: now + delay }
  // In the place of the word it replaces: the deploy was first seen then.
  if (earlier) memory.waiting[index] = entry
  else memory.waiting.push(entry)
  return true
}

/** A deploy whose wait ended, as it is recorded. */
function ended(notification: Notification): Notification {
  return notification.stage === 'progressing'
    ? { ...notification, stage: 'final', outcome: 'success', status: 'Succeeded, health unknown' }
    : { ...notification, stage: 'final', outcome: 'unknown', status: 'Running, no end seen' }
}

/**
 * Records a final deploy's key, and its change unless it is a success that repeats what its
 * object's last success left running: a re-sync or self-heal of Argo CD's revision, Flux's
 * report at every interval. A rollback is always news.
 */
function settle(memory: DeployMemory, key: string, notification: Notification, now: number) {
  memory.waiting = memory.waiting.filter(entry => entry.key !== key)
  memory.recorded.set(key, now)
  const { object, version, outcome, rollback } = notification
  const last = memory.succeeded.get(object)
  // What a success leaves running: Argo CD's revision; Flux's deploy (a Helm release's values too).
  const running = notification.controller === 'argocd' ? version : notification.deployKey
  if (outcome === 'success' && running !== undefined) {
    if (running === last?.running && !rollback) return []
    // Set again, so that it moves last: the most recently deployed object.
    memory.succeeded.delete(object)
    memory.succeeded.set(object, { running, version })
  }
  const previousVersion =
    notification.previousVersion ?? (last?.version === version ? undefined : last?.version)
  const change = { ...notification, ...(previousVersion !== undefined && { previousVersion }) }
  return [{ key, notification: change }]
}

/** Drops the oldest entries while the map holds more than `max`. */
function dropOldest(map: Map<string, unknown>, max: number): void {
  for (const key of map.keys()) {
    if (map.size <= max) return
    map.delete(key)
  }
}

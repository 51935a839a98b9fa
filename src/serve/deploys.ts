/**
 * Notifications -> one change per deploy, whatever their number and order: a deploy is recorded
 * once, at its first final state. Pure: the caller passes the time and keeps the memory (JSON).
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

/** Lists, oldest first: cheap to copy whole, where an object of 20,000 keys is not. */
export interface DeployMemory {
  /** Argo CD deploys not yet final: the furthest word of each, and when its wait ends. */
  waiting: { key: string; notification: Notification; until: number }[]
  /** Each key recorded (or found to record nothing), with when. */
  recorded: { key: string; at: number }[]
  /** By object, what its last recorded success left running, and its version. */
  succeeded: { object: string; running: string; version?: string }[]
}

/** A final notification to record, and its key (the deploy's, with Flux's outcome). */
export interface DeployChange {
  key: string
  notification: Notification
}

/** The memory after a step, and the changes it made final. */
export interface Applied {
  memory: DeployMemory
  changes: DeployChange[]
}

export const emptyMemory = (): DeployMemory => ({ waiting: [], recorded: [], succeeded: [] })

/** A notification in: the changes it makes final (none for a repeat). */
export function receive(memory: DeployMemory, notification: Notification, now: number): Applied {
  const key = changeKey(notification)
  // Older than its key would be kept: it cannot be told from a repeat.
  const tooOld = (notification.startedAt ?? now) < now - KEY_RETENTION_MS
  if (tooOld || memory.recorded.some(entry => entry.key === key)) return { memory, changes: [] }
  const draft = copyOf(memory)
  const changes: DeployChange[] = []
  if (notification.stage === 'final') changes.push(...settle(draft, key, notification, now))
  else wait(draft, key, notification, now)
  for (const oldest of draft.waiting.slice(0, -MAX_WAITING_DEPLOYS)) {
    changes.push(...settle(draft, oldest.key, ended(oldest.notification), now))
  }
  draft.recorded = draft.recorded.slice(-MAX_RECORDED_KEYS)
  draft.succeeded = draft.succeeded.slice(-MAX_OBJECTS)
  return { memory: draft, changes }
}

/** Deploys whose wait ended, as they stand; keys past their retention dropped. */
export function expire(memory: DeployMemory, now: number): Applied {
  const draft = copyOf(memory)
  draft.recorded = draft.recorded.filter(({ at }) => at > now - KEY_RETENTION_MS)
  const changes: DeployChange[] = []
  for (const { key, notification, until } of memory.waiting) {
    if (until <= now) changes.push(...settle(draft, key, ended(notification), now))
  }
  return { memory: draft, changes }
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

/** Keeps a deploy not yet final; a later word never undoes a further one (Running after Progressing). */
function wait(draft: DeployMemory, key: string, notification: Notification, now: number): void {
  const earlier = draft.waiting.find(entry => entry.key === key)
  const undoes = earlier?.notification.stage === 'progressing' || notification.stage === 'running'
  if (earlier && undoes) return
  const delay = notification.stage === 'progressing' ? HEALTH_WAIT_MS : RUNNING_WAIT_MS
  const entry = { key, notification, until: now + delay }
  // In the place of the word it replaces: the deploy was first seen then.
  draft.waiting = earlier
    ? draft.waiting.map(other => (other === earlier ? entry : other))
    : [...draft.waiting, entry]
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
function settle(draft: DeployMemory, key: string, notification: Notification, now: number) {
  draft.waiting = draft.waiting.filter(entry => entry.key !== key)
  draft.recorded.push({ key, at: now })
  const { object, version, outcome, rollback } = notification
  const last = draft.succeeded.find(entry => entry.object === object)
  // What a success leaves running: Argo CD's revision; Flux's deploy (a Helm release's values too).
  const running = notification.controller === 'argocd' ? version : notification.deployKey
  if (outcome === 'success' && running !== undefined) {
    if (running === last?.running && !rollback) return []
    // Last in the list: the most recently deployed object.
    draft.succeeded = [
      ...draft.succeeded.filter(entry => entry !== last),
      { object, running, version }
    ]
  }
  const previousVersion =
    notification.previousVersion ?? (last?.version === version ? undefined : last?.version)
  const change = { ...notification, ...(previousVersion !== undefined && { previousVersion }) }
  return [{ key, notification: change }]
}

/** A copy whose lists the draft may change, leaving the memory it was given as it was. */
function copyOf({ waiting, recorded, succeeded }: DeployMemory): DeployMemory {
  return { waiting: [...waiting], recorded: [...recorded], succeeded: [...succeeded] }
}

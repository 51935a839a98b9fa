/**
 * The receiver's folder, so that a receiver killed at any moment loses nothing it accepted.
 * - queue.ndjson: a commit appends, in one synced write, a line per change it accepted, then the
 *   input it applied to the deploy memory: it is whole once that last line is. A change sent or
 *   dropped gets a line that says so. The memory is the last snapshot with the commits since
 *   applied again (a step depends on the memory, its input and its time alone), so that a commit
 *   writes what is new, never all. A commit that fails leaves the memory as those lines say. The
 *   queue is compacted to what waits and a snapshot when opened, every thousand commits, and once
 *   the lines of the past outweigh what it keeps.
 * - receiver.lock: a Unix socket the receiver listens on. One that nobody answers was left by a
 *   receiver that died (even a container's pid 1), and is taken over.
 * No link is followed, each file must be a regular file, and no secret is kept.
 */
import { once } from 'node:events'
import { constants } from 'node:fs'
import { lstat, mkdir, open, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises'
import { createConnection, createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { errorMessage } from '../errors.ts'
import { isJsonObject, parseJsonSafely } from '../helpers/json.ts'
import { emptyMemory, memoryFromJson, memoryToJson, type MemoryJson } from './deploys.ts'
import type { Applied, DeployChange, DeployMemory } from './deploys.ts'

/** A notification that would make more changes wait gets 503. */
export const MAX_WAITING_CHANGES = 10_000
const COMPACT_AFTER_BYTES = 1024 * 1024
const COMPACT_EVERY_COMMITS = 1000
/** The longest path a Unix socket takes: Node 20 cuts a longer one short without a word. */
const MAX_LOCK_PATH_BYTES = 107
const QUEUE = 'queue.ndjson'
const LOCK = 'receiver.lock'
const PROBE = 'readiness.probe'
const { O_APPEND, O_CREAT, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_RDWR } = constants
const O_WRITE_NEW = constants.O_WRONLY | O_CREAT | constants.O_TRUNC

/** Why the folder cannot be used: the receiver does not start. */
export class StateError extends Error {}

/** Too many changes wait: the notification gets 503, and its controller sends it again. */
export class FullError extends Error {}

/** A change accepted and not yet sent or dropped: its number in the queue, and its line there. */
export interface Waiting {
  seq: number
  acceptedAt: number
  line: string
}

/**
 * Applies an input (plain JSON) to the memory at a time, in place; `changed: false` when it
 * changes nothing. The same input on the same memory does the same: a commit can be replayed.
 */
export type Apply = (memory: DeployMemory, input: unknown, now: number) => Applied

type QueueLine =
  | { seq: number; acceptedAt: number; change: DeployChange }
  | { at: number; input: unknown }
  | { memory: MemoryJson }
  | { done: number }

interface Kept {
  memory: DeployMemory
  waiting: Waiting[]
  skipped: number
}

export class StateFolder {
  readonly dir: string
  memory: DeployMemory
  /** Lines of the queue that could not be read or applied when it was opened, and were skipped. */
  readonly skipped: number
  private readonly apply: Apply
  private readonly lock: Server
  private queue: FileHandle
  private waiting: Waiting[]
  private nextSeq: number
  /** The queue's committed length: what a failed write left past it is cut before the next. */
  private size: number
  private dirty = false
  /** What a compaction keeps: the waiting changes' lines and the snapshot's. */
  private keptBytes: number
  private commits = 0
  /** Set when the memory could not be read again after a failed commit: no update is taken. */
  private broken?: StateError
  private chain: Promise<unknown> = Promise.resolve()
  private wake = (): void => {}

  private constructor(dir: string, apply: Apply, lock: Server, kept: Kept, queue: Written) {
    this.dir = dir
    this.apply = apply
    this.lock = lock
    this.memory = kept.memory
    this.waiting = kept.waiting
    this.skipped = kept.skipped
    this.nextSeq = (kept.waiting.at(-1)?.seq ?? -1) + 1
    this.queue = queue.handle
    this.size = queue.bytes
    this.keptBytes = queue.bytes
  }

  /** Takes the folder (made when missing) and its lock; throws StateError when it cannot. */
  static async open(dir: string, apply: Apply): Promise<StateFolder> {
    await checkFolder(dir)
    const lock = await takeLock(dir)
    try {
      const kept = await readQueue(dir, apply)
      const queue = await writeQueue(dir, kept.waiting, kept.memory)
      return new StateFolder(dir, apply, lock, kept, queue)
    } catch (error) {
      lock.close()
      throw error instanceof StateError ? error : new StateError(errorMessage(error))
    }
  }

  get waitingCount(): number {
    return this.waiting.length
  }

  /** The change to send next: the oldest. */
  next(): Waiting | undefined {
    return this.waiting[0]
  }

  read(entry: Waiting): DeployChange {
    return (JSON.parse(entry.line) as { change: DeployChange }).change
  }

  /** Resolves once a commit adds changes, or the signal is aborted. */
  arrival(signal: AbortSignal): Promise<void> {
    return new Promise(resolve => {
      const woken = (): void => {
        signal.removeEventListener('abort', woken)
        resolve()
      }
      this.wake = woken
      signal.addEventListener('abort', woken)
    })
  }

  /**
   * Applies an input to the memory and keeps what it makes, synced, before it resolves. Throws
   * FullError past the bound, or the file system's error: then nothing is committed, and the
   * memory is read again from the folder, so that the input is not remembered.
   */
  update(input: unknown, now: number): Promise<DeployChange[]> {
    return this.exclusive(() => {
      if (this.broken) throw this.broken
      return this.commit(input, now).catch(async (error: unknown) => {
        await this.readMemory()
        throw error
      })
    })
  }

  /**
   * The change was sent or dropped: it stops waiting at once, then a synced line says so. When
   * that line cannot be written, a receiver started again sends the change again.
   */
  done(entry: Waiting): Promise<void> {
    this.waiting = this.waiting.filter(waiting => waiting !== entry)
    this.keptBytes -= bytesOf([entry])
    return this.exclusive(async () => {
      await this.append(lineOf({ done: entry.seq }))
      await this.compactWhenDue().catch(() => undefined)
    })
  }

  /** Whether a file can be written in the folder now, and an update taken: the readiness probe. */
  writable(): Promise<boolean> {
    if (this.broken) return Promise.resolve(false)
    const flag = O_WRITE_NEW | O_NOFOLLOW | O_NONBLOCK
    return writeFile(join(this.dir, PROBE), 'ok\n', { flag }).then(
      () => true,
      () => false
    )
  }

  /** Releases the lock and the queue, once what is under way is written. */
  async close(): Promise<void> {
    await this.chain
    await new Promise(resolve => this.lock.close(resolve))
    await this.queue.close()
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work)
    this.chain = run.catch(() => undefined)
    return run
  }

  private async commit(input: unknown, now: number): Promise<DeployChange[]> {
    const { changed, changes } = this.apply(this.memory, input, now)
    // A repeat changes nothing: the folder already says it.
    if (!changed) return changes
    if (this.waiting.length + changes.length > MAX_WAITING_CHANGES) {
      throw new FullError(`${MAX_WAITING_CHANGES} changes already wait to be sent.`)
    }
    const entries = changes.map((change, index) => {
      const seq = this.nextSeq + index
      return { seq, acceptedAt: now, line: lineOf({ seq, acceptedAt: now, change }) }
    })
    await this.append([...entries.map(({ line }) => line), lineOf({ at: now, input })].join(''))
    this.nextSeq += entries.length
    this.waiting.push(...entries)
    this.keptBytes += bytesOf(entries)
    this.commits++
    if (entries.length > 0) this.wake()
    // Committed: a compaction that fails is tried again after the next commit.
    await this.compactWhenDue().catch(() => undefined)
    return changes
  }

  /**
   * The memory as the committed part of the queue says, read through the queue held open (which
   * may have been removed). When even that fails, no memory can be trusted until a restart.
   */
  private async readMemory(): Promise<void> {
    try {
      const committed = Buffer.alloc(this.size)
      const { bytesRead } = await this.queue.read(committed, 0, this.size, 0)
      if (bytesRead < this.size) throw new Error(`${QUEUE} is shorter than what was committed`)
      this.memory = keptOf(committed.toString('utf8'), this.apply).memory
    } catch (error) {
      const why = `The deploy memory in ${this.dir} could not be read again after a failed commit`
      this.broken = new StateError(`${why} (${errorMessage(error)}): restart the receiver.`)
    }
  }

  /** Appends whole and synced, first cutting what a failed write left; never to a removed queue. */
  private async append(text: string): Promise<void> {
    if (this.dirty) await this.queue.truncate(this.size)
    this.dirty = true
    if ((await this.queue.stat()).nlink === 0) throw new Error(`${this.dir} was removed.`)
    await this.queue.appendFile(text)
    await this.queue.sync()
    this.size += Buffer.byteLength(text)
    this.dirty = false
  }

  private async compactWhenDue(): Promise<void> {
    const outweighed = this.size - this.keptBytes > Math.max(this.keptBytes, COMPACT_AFTER_BYTES)
    if (!outweighed && this.commits < COMPACT_EVERY_COMMITS) return
    const { handle, bytes } = await writeQueue(this.dir, this.waiting, this.memory)
    await this.queue.close()
    this.queue = handle
    this.size = bytes
    this.keptBytes = bytes
    this.commits = 0
  }
}

function lineOf(line: QueueLine): string {
  return `${JSON.stringify(line)}\n`
}

/** The bytes of the waiting changes' lines. */
function bytesOf(waiting: Waiting[]): number {
  return waiting.reduce((sum, { line }) => sum + Buffer.byteLength(line), 0)
}

/**
 * The changes committed and not done, and the memory: the last snapshot, with each commit since
 * applied again. Lines after the last whole commit were never committed (never answered 202).
 */
async function readQueue(dir: string, apply: Apply): Promise<Kept> {
  const file = await openFile(dir, QUEUE, O_RDONLY).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error
  })
  return keptOf((await file?.readFile('utf8').finally(() => file.close())) ?? '', apply)
}

function keptOf(queue: string, apply: Apply): Kept {
  const lines = queue.split('\n')
  // What follows the last line break is not a whole line.
  lines.pop()
  const committed = new Map<number, Waiting>()
  let pending: Waiting[] = []
  let memory = emptyMemory()
  let skipped = 0
  for (const text of lines) {
    const line = parseJsonSafely(text) as Record<string, unknown> | undefined
    if (typeof line?.seq === 'number' && typeof line.acceptedAt === 'number' && line.change) {
      pending.push({ seq: line.seq, acceptedAt: line.acceptedAt, line: `${text}\n` })
    } else if (typeof line?.done === 'number') {
      committed.delete(line.done)
    } else if (isJsonObject(line?.memory) || typeof line?.at === 'number') {
      for (const entry of pending) committed.set(entry.seq, entry)
      pending = []
      try {
        if (isJsonObject(line.memory)) memory = memoryFromJson(line.memory as MemoryJson)
        else apply(memory, line.input, line.at as number)
      } catch {
        skipped++
      }
    } else {
      skipped++
    }
  }
  return { memory, waiting: [...committed.values()], skipped }
}

/** The queue as written anew: open to append, and its length. */
type Written = { handle: FileHandle; bytes: number }

/** Writes the queue anew (synced, renamed over the old, the folder synced), and opens it. */
async function writeQueue(dir: string, waiting: Waiting[], memory: DeployMemory): Promise<Written> {
  const next = await openFile(dir, `${QUEUE}.tmp`, O_WRITE_NEW)
  const snapshot = lineOf({ memory: memoryToJson(memory) })
  const text = [...waiting.map(({ line }) => line), snapshot].join('')
  try {
    await next.writeFile(text)
    await next.sync()
  } finally {
    await next.close()
  }
  await rename(join(dir, `${QUEUE}.tmp`), join(dir, QUEUE))
  const folder = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
  await folder.sync().finally(() => folder.close())
  return { handle: await openFile(dir, QUEUE, O_RDWR | O_APPEND), bytes: Buffer.byteLength(text) }
}

/** The folder, made when missing, for its owner alone; never a symbolic link. */
async function checkFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 }).catch(() => undefined)
  const info = await lstat(dir).catch((error: unknown) => {
    throw new StateError(errorMessage(error))
  })
  if (info.isSymbolicLink()) {
    throw new StateError(
      `${dir} is a symbolic link: give the folder itself, as no link is followed.`
    )
  }
  if (!info.isDirectory()) throw new StateError(`${dir} is not a folder.`)
}

/** A file of the folder, never through a link, and a regular file. */
async function openFile(dir: string, name: string, flags: number): Promise<FileHandle> {
  const path = join(dir, name)
  const file = await open(path, flags | O_NOFOLLOW | O_NONBLOCK, 0o600).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'ELOOP') throw error
    throw new StateError(`${path} is a symbolic link, which is never followed: remove it.`)
  })
  if ((await file.stat()).isFile()) return file
  await file.close()
  throw new StateError(`${path} is not a regular file: remove it.`)
}

/** Listens on the lock's socket, unless a receiver answers on it. Anything else there is left. */
async function takeLock(dir: string): Promise<Server> {
  const path = join(dir, LOCK)
  if (Buffer.byteLength(path) > MAX_LOCK_PATH_BYTES) {
    throw new StateError(
      `${path} is too long a path for a socket (at most ${MAX_LOCK_PATH_BYTES} bytes).`
    )
  }
  const held = new StateError(
    `Another receiver uses ${dir}: stop it first, or give each receiver its own folder.`
  )
  const found = await lstat(path).catch(() => undefined)
  if (found && !found.isSocket()) {
    throw new StateError(`${path} is not the receiver's lock: remove it.`)
  }
  if (found && (await answers(path))) throw held
  if (found) await unlink(path)
  const server = createServer(socket => socket.destroy())
  server.listen(path)
  // Another receiver that took the lock between these steps holds it.
  await once(server, 'listening').catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EADDRINUSE' ? held : error
  })
  return server
}

async function answers(path: string): Promise<boolean> {
  const socket = createConnection(path)
  const answered = await once(socket, 'connect').then(
    () => true,
    () => false
  )
  socket.destroy()
  return answered
}

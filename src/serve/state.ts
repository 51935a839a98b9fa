/**
 * The receiver's folder, so that a receiver killed at any moment loses nothing it accepted.
 * - queue.ndjson: each commit appends, in one synced write, a line per change it accepted, then
 *   a line of what it applied to the deploy memory (a notification, or the deploys' waits looked
 *   at): a commit is whole once that line is. Changes after the last whole commit line were never
 *   answered 202, and are dropped when the folder is opened; the memory is the last snapshot with
 *   the commits since applied again (the step is pure). A change sent or dropped gets a line that
 *   says so. The queue is rewritten (the waiting changes, then a snapshot) when the folder is
 *   opened, and once the lines of the past outweigh it: a commit writes what is new, never all.
 * - receiver.lock: a Unix socket the receiver listens on. A receiver that can connect to it
 *   refuses to start; one killed (even a container's pid 1) leaves a socket nobody answers.
 * No link is followed, each file must be a regular file, and no secret is kept. Memory holds only
 * where each waiting change is; the change is read from the queue when it is sent.
 */
import { constants } from 'node:fs'
import { lstat, mkdir, open, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises'
import { createConnection, createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { errorMessage } from '../errors.ts'
import { parseJsonSafely } from '../helpers/json.ts'
import { emptyMemory, type DeployChange, type DeployMemory } from './deploys.ts'

/** A notification that would make more changes wait gets 503. */
export const MAX_WAITING_CHANGES = 10_000
/** The queue is rewritten once the lines of the past pass this and what it must keep. */
const REWRITE_AFTER_BYTES = 1024 * 1024
/** A snapshot of the memory is appended after this many commits: opening applies no more again. */
const SNAPSHOT_EVERY_COMMITS = 1000
/** The longest path a Unix socket takes (sun_path, without its final NUL byte). */
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

/** A waiting change as memory holds it: where its line is in the queue, which names it. */
export interface Waiting {
  acceptedAt: number
  offset: number
  length: number
}

/** What an input (plain JSON) makes of the memory at a time: pure, so that it can be replayed. */
export type Apply = (
  memory: DeployMemory,
  input: unknown,
  now: number
) => { memory: DeployMemory; changes: DeployChange[] }

type QueueLine =
  | { acceptedAt: number; change: DeployChange }
  | { at: number; input: unknown }
  | { memory: DeployMemory }
  | { done: number }

export class StateFolder {
  readonly dir: string
  memory: DeployMemory
  /** Lines of the queue that could not be read or applied when it was opened, and were skipped. */
  readonly skipped: number
  private readonly apply: Apply
  private waiting: Waiting[]
  /** The queue's committed length: what a failed write left past it is cut before the next. */
  private size: number
  private dirty = false
  /** What a rewrite writes: the waiting changes' lines and the snapshot's. */
  private keptBytes: number
  private commitsSinceSnapshot = 0
  private readonly lock: Server
  private queue: FileHandle
  private chain: Promise<unknown> = Promise.resolve()
  private wake = (): void => {}

  private constructor(dir: string, apply: Apply, files: Files, kept: Kept) {
    this.dir = dir
    this.apply = apply
    this.lock = files.lock
    this.queue = files.queue
    this.memory = kept.memory
    this.waiting = kept.waiting
    this.size = kept.size
    this.keptBytes = kept.size
    this.skipped = kept.skipped
  }

  /** Takes the folder (made when missing) and its lock; throws StateError when it cannot. */
  static async open(dir: string, apply: Apply): Promise<StateFolder> {
    await checkFolder(dir)
    const lock = await takeLock(dir)
    try {
      const kept = await readQueue(dir, apply)
      const queue = await writeQueue(dir, kept.lines)
      return new StateFolder(dir, apply, { lock, queue }, kept)
    } catch (error) {
      lock.close()
      throw error instanceof StateError ? error : new StateError(errorMessage(error))
    }
  }

  get waitingCount(): number {
    return this.waiting.length
  }

  get oldestAcceptedAt(): number | undefined {
    return this.waiting[0]?.acceptedAt
  }

  /** The change to send next: the oldest. */
  next(): Waiting | undefined {
    return this.waiting[0]
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
   * FullError past the bound, or the file system's error (then nothing is committed).
   */
  update(input: unknown, now: number): Promise<DeployChange[]> {
    return this.exclusive(async () => {
      const { memory, changes } = this.apply(this.memory, input, now)
      // A repeat changes nothing: the folder already says it.
      if (memory === this.memory && changes.length === 0) return changes
      if (this.waiting.length + changes.length > MAX_WAITING_CHANGES) {
        throw new FullError(`${MAX_WAITING_CHANGES} changes already wait to be sent.`)
      }
      const lines = changes.map(change => lineOf({ acceptedAt: now, change }))
      const commit = lineOf({ at: now, input })
      await this.append([...lines, commit].join(''))
      for (const line of lines) {
        const length = Buffer.byteLength(line)
        this.waiting.push({ acceptedAt: now, offset: this.size, length })
        this.keptBytes += length
        this.committed(line)
      }
      this.committed(commit)
      this.memory = memory
      if (lines.length > 0) this.wake()
      // Committed: a snapshot or a rewrite that fails is tried again later.
      await this.snapshotWhenDue().catch(() => undefined)
      await this.rewriteWhenOutweighed().catch(() => undefined)
      return changes
    })
  }

  async read(entry: Waiting): Promise<DeployChange> {
    const buffer = Buffer.alloc(entry.length)
    await this.queue.read(buffer, 0, entry.length, entry.offset)
    return (JSON.parse(buffer.toString('utf8')) as { change: DeployChange }).change
  }

  /**
   * The change was sent or dropped: it stops waiting at once, then a synced line says so. When
   * that line cannot be written, a receiver started again sends the change again.
   */
  done(entry: Waiting): Promise<void> {
    this.waiting = this.waiting.filter(waiting => waiting !== entry)
    this.keptBytes -= entry.length
    return this.exclusive(async () => {
      const line = lineOf({ done: entry.offset })
      await this.append(line)
      this.committed(line)
      await this.rewriteWhenOutweighed().catch(() => undefined)
    })
  }

  /** Whether a file can be written in the folder now: the readiness probe. */
  writable(): Promise<boolean> {
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

  /** One write at a time, in order: a commit, a change done, a rewrite. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work)
    this.chain = run.catch(() => undefined)
    return run
  }

  /** Appends whole and synced, first cutting what a failed write left; never to a removed queue. */
  private async append(text: string): Promise<void> {
    if (this.dirty) await this.queue.truncate(this.size)
    this.dirty = true
    if ((await this.queue.stat()).nlink === 0) throw new Error(`${this.dir} was removed.`)
    await this.queue.appendFile(text)
    await this.queue.sync()
  }

  private committed(line: string): void {
    this.size += Buffer.byteLength(line)
    this.dirty = false
  }

  private async snapshotWhenDue(): Promise<void> {
    if (++this.commitsSinceSnapshot < SNAPSHOT_EVERY_COMMITS) return
    const line = lineOf({ memory: this.memory })
    await this.append(line)
    this.committed(line)
    this.commitsSinceSnapshot = 0
  }

  /** The waiting changes, then a snapshot of the memory, once the past outweighs them. */
  private async rewriteWhenOutweighed(): Promise<void> {
    const kept = this.keptBytes
    if (this.size <= kept + Math.max(kept, REWRITE_AFTER_BYTES)) return
    const lines = await Promise.all(
      this.waiting.map(async entry =>
        lineOf({ acceptedAt: entry.acceptedAt, change: await this.read(entry) })
      )
    )
    const rewritten = layout(lines, this.waiting, this.memory)
    const queue = await writeQueue(this.dir, rewritten.lines)
    await this.queue.close()
    this.queue = queue
    this.waiting = rewritten.waiting
    this.size = rewritten.size
    this.keptBytes = rewritten.size
    this.commitsSinceSnapshot = 0
  }
}

interface Files {
  lock: Server
  queue: FileHandle
}

/** What a queue keeps: its lines (the waiting changes', then the snapshot), and where each is. */
interface Kept {
  memory: DeployMemory
  waiting: Waiting[]
  lines: string[]
  size: number
  skipped: number
}

function lineOf(line: QueueLine): string {
  return `${JSON.stringify(line)}\n`
}

/** The waiting changes' lines, then the memory's: a queue's whole content, and where each is. */
function layout(lines: string[], waiting: Waiting[], memory: DeployMemory): Omit<Kept, 'skipped'> {
  let size = 0
  const moved = waiting.map((entry, index) => {
    const length = Buffer.byteLength(lines[index])
    size += length
    return { acceptedAt: entry.acceptedAt, offset: size - length, length }
  })
  const snapshot = lineOf({ memory })
  return {
    memory,
    waiting: moved,
    lines: [...lines, snapshot],
    size: size + Buffer.byteLength(snapshot)
  }
}

/**
 * What the queue keeps: the changes committed and not done, and the memory (the last snapshot,
 * with each commit since applied again). Lines after the last whole commit were never committed.
 */
async function readQueue(dir: string, apply: Apply): Promise<Kept> {
  const bytes = (await contents(dir)) ?? Buffer.alloc(0)
  const committed = new Map<number, Waiting & { line: string }>()
  let pending: Array<Waiting & { line: string }> = []
  let memory = emptyMemory()
  let skipped = 0
  for (let offset = 0; offset < bytes.length;) {
    const end = bytes.indexOf(0x0a, offset) + 1 || bytes.length
    const text = bytes.toString('utf8', offset, end)
    const whole = bytes[end - 1] === 0x0a
    const line = (whole ? parseJsonSafely(text) : undefined) as Record<string, unknown> | undefined
    if (typeof line?.acceptedAt === 'number' && isObject(line.change)) {
      pending.push({ acceptedAt: line.acceptedAt, offset, length: end - offset, line: text })
    } else if (typeof line?.done === 'number') {
      committed.delete(line.done)
    } else if (isObject(line?.memory) || typeof line?.at === 'number') {
      // A whole commit: the changes before it are committed, and the memory is as it left it.
      for (const entry of pending) committed.set(entry.offset, entry)
      pending = []
      const next = isObject(line.memory) ? line.memory : replayed(apply, memory, line)
      if (next === undefined) skipped++
      memory = (next ?? memory) as DeployMemory
    } else if (whole) {
      skipped++
    }
    offset = end
  }
  const waiting = [...committed.values()]
  return {
    ...layout(
      waiting.map(({ line }) => line),
      waiting,
      memory
    ),
    skipped
  }
}

/** The memory as a commit left it, applied again; undefined when it cannot be. */
function replayed(apply: Apply, memory: DeployMemory, line: Record<string, unknown>) {
  try {
    return apply(memory, line.input, line.at as number).memory
  } catch {
    return undefined
  }
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null

/** Writes the queue anew (synced, renamed over the old, the folder synced), and opens it. */
async function writeQueue(dir: string, lines: string[]): Promise<FileHandle> {
  const next = await openFile(dir, `${QUEUE}.tmp`, O_WRITE_NEW)
  try {
    await next.writeFile(lines.join(''))
    await next.sync()
  } finally {
    await next.close()
  }
  await rename(join(dir, `${QUEUE}.tmp`), join(dir, QUEUE))
  const folder = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
  await folder.sync().finally(() => folder.close())
  return openFile(dir, QUEUE, O_RDWR | O_APPEND)
}

/** The folder, made when missing; never a symbolic link. */
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

/** The queue's bytes, or undefined when there is none yet. */
async function contents(dir: string): Promise<Buffer | undefined> {
  const file = await openFile(dir, QUEUE, O_RDONLY).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  })
  try {
    return await file?.readFile()
  } finally {
    await file?.close()
  }
}

/**
 * Listens on the lock's socket. One that answers belongs to a receiver that runs; one that does
 * not was left by a receiver that died, and is removed. Anything else there is not touched.
 */
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
  if (found && !found.isSocket())
    throw new StateError(`${path} is not the receiver's lock: remove it.`)
  if (found && (await answers(path))) throw held
  if (found) await unlink(path)
  const server = createServer(socket => socket.destroy())
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? held : error)
    )
    server.listen(path, resolve)
  })
  return server
}

function answers(path: string): Promise<boolean> {
  return new Promise(resolve => {
    const socket = createConnection(path)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

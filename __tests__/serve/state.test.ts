/**
 * The state folder: what a commit keeps (changes first, then the memory whose rename commits
 * them), what opening the folder again finds after a crash, the bound on waiting changes, the
 * output files' rules (no link followed, regular files only) and the lock.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync
} from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  emptyMemory,
  memoryToJson,
  type DeployChange,
  type DeployMemory
} from '../../src/serve/deploys.ts'
import { readNotification } from '../../src/serve/notifications.ts'
import {
  FullError,
  MAX_WAITING_CHANGES,
  StateError,
  StateFolder,
  type Apply
} from '../../src/serve/state.ts'

const read = readNotification(
  'flux',
  JSON.parse(readFileSync('__tests__/fixtures/gitops/flux-kustomization-succeeded.json', 'utf8'))
)
if (!('notification' in read)) throw new Error('the fixture must be a notification')
const { notification } = read

/** A change whose deploy key is `key`, with `padding` characters of metadata. */
function change(key: string, padding = 0): DeployChange {
  const metadata = { ...notification.metadata, padding: 'x'.repeat(padding) }
  return { key, notification: { ...notification, deployKey: key, metadata } }
}

/**
 * The tests' input: changes to add (their keys noted in the memory), keys only noted, the
 * changes' padding, and filler the commit's line carries.
 */
type Input = { add?: string[]; note?: string[]; padding?: number; filler?: string }

/**
 * As the deploys' own, it changes the memory in place, noting keys as recorded: keys all noted
 * already are a repeat, which changes nothing.
 */
const apply: Apply = (memory, input, now) => {
  const { add = [], note = [], padding = 0 } = input as Input
  const fresh = (key: string) => !memory.recorded.has(key)
  const changes = add.filter(fresh).map(key => change(key, padding))
  const noted = [...add, ...note].filter(fresh)
  for (const key of noted) memory.recorded.set(key, now)
  return { changed: noted.length > 0, changes }
}

const notes = (memory: DeployMemory) => [...memory.recorded.keys()]

async function keysWaiting(state: StateFolder): Promise<string[]> {
  const keys: string[] = []
  for (let entry = state.next(); entry; entry = state.next()) {
    keys.push(state.read(entry).key)
    await state.done(entry)
  }
  return keys
}

let dir: string
let opened: StateFolder[]

async function openState(): Promise<StateFolder> {
  const state = await StateFolder.open(dir, apply)
  opened.push(state)
  return state
}

beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'cta-state-')), 'state')
  opened = []
})

afterEach(async () => {
  for (const state of opened) await state.close().catch(() => undefined)
  rmSync(join(dir, '..'), { recursive: true, force: true })
})

const queuePath = () => join(dir, 'queue.ndjson')
const queueLines = () =>
  readFileSync(queuePath(), 'utf8')
    .trim()
    .split('\n')
    .map(line => JSON.parse(line))

/** What a receiver leaves after accepting `count` changes in one commit. */
function acceptedQueue(count: number, memory: DeployMemory = emptyMemory()): string {
  const line = (seq: number) =>
    JSON.stringify({ seq, acceptedAt: 1000, change: { key: `k${seq}` } })
  const lines = Array.from({ length: count }, (_, index) => `${line(index)}\n`)
  return `${lines.join('')}${JSON.stringify({ memory: memoryToJson(memory) })}\n`
}

describe('a commit', () => {
  it('is on disk when update resolves: its changes, then what it applied, never the whole memory', async () => {
    const state = await openState()
    const changes = await state.update({ add: ['a', 'b'] }, 1000)
    expect(changes.map(({ key }) => key)).toEqual(['a', 'b'])
    const [snapshot, a, b, commit, ...more] = queueLines()
    expect(snapshot).toEqual({ memory: memoryToJson(emptyMemory()) })
    expect([a.change.key, b.change.key, a.acceptedAt]).toEqual(['a', 'b', 1000])
    expect(commit).toEqual({ at: 1000, input: { add: ['a', 'b'] } })
    expect(more).toEqual([])
    expect(notes(state.memory)).toEqual(['a', 'b'])
    expect(state.waitingCount).toBe(2)
    expect(state.next()?.acceptedAt).toBe(1000)
  })

  it('is found by the next receiver: the memory, and the changes still waiting in order', async () => {
    const first = await openState()
    await first.update({ add: ['a'] }, 1000)
    await first.update({ add: ['b', 'c'] }, 2000)
    await first.done(first.next()!)
    const memory = first.memory
    await first.close()
    const second = await openState()
    expect(second.memory).toEqual(memory)
    expect(second.next()?.acceptedAt).toBe(2000)
    expect(await keysWaiting(second)).toEqual(['b', 'c'])
  })

  it('that repeats what the memory says writes nothing', async () => {
    const state = await openState()
    await state.update({ add: ['a'] }, 1000)
    const written = readFileSync(queuePath())
    expect(await state.update({}, 2000)).toEqual([])
    expect(readFileSync(queuePath()).equals(written)).toBe(true)
  })

  it(`is refused once ${MAX_WAITING_CHANGES} changes wait, and keeps nothing of it`, async () => {
    mkdirSync(dir)
    writeFileSync(queuePath(), acceptedQueue(MAX_WAITING_CHANGES))
    const state = await openState()
    expect(state.waitingCount).toBe(MAX_WAITING_CHANGES)
    const written = readFileSync(queuePath())
    await expect(state.update({ add: ['one more'] }, 2000)).rejects.toThrow(FullError)
    expect(state.memory).toEqual(emptyMemory())
    expect(readFileSync(queuePath()).equals(written)).toBe(true)
    // A commit with no change still goes through: it only updates what the memory knows.
    await state.update({ note: ['x'] }, 3000)
    expect(notes(state.memory)).toEqual(['x'])
  })

  it('refused, is not remembered: once there is room, the same input is accepted and kept', async () => {
    mkdirSync(dir)
    writeFileSync(queuePath(), acceptedQueue(MAX_WAITING_CHANGES))
    const state = await openState()
    await state.update({ note: ['x'] }, 1000)
    await expect(state.update({ add: ['a'], note: ['y'] }, 2000)).rejects.toThrow(FullError)
    expect(notes(state.memory)).toEqual(['x'])
    await state.done(state.next()!)
    expect(await state.update({ add: ['a'], note: ['y'] }, 3000)).toEqual([change('a')])
    await state.close()
    const again = await openState()
    expect(notes(again.memory)).toEqual(['x', 'a', 'y'])
    expect(again.waitingCount).toBe(MAX_WAITING_CHANGES)
  })

  it('fails once the folder is removed, and the readiness probe says so', async () => {
    const state = await openState()
    expect(await state.writable()).toBe(true)
    rmSync(dir, { recursive: true })
    expect(await state.writable()).toBe(false)
    await expect(state.update({ add: ['a'] }, 1000)).rejects.toThrow(`${dir} was removed.`)
    expect(state.waitingCount).toBe(0)
  })

  it('that fails leaves the memory as the queue held open says, even once it is removed', async () => {
    const state = await openState()
    await state.update({ add: ['a'] }, 1000)
    rmSync(queuePath())
    await expect(state.update({ add: ['b'] }, 2000)).rejects.toThrow(`${dir} was removed.`)
    expect(notes(state.memory)).toEqual(['a'])
  })

  it('that fails when even the memory cannot be read again: no update, and not ready, until a restart', async () => {
    const state = await openState()
    await state.update({ add: ['a'] }, 1000)
    // Cut short, then removed: the queue no longer holds what was committed.
    truncateSync(queuePath(), 10)
    rmSync(queuePath())
    await expect(state.update({ add: ['b'] }, 2000)).rejects.toThrow(`${dir} was removed.`)
    const broken = new StateError(
      `The deploy memory in ${dir} could not be read again after a failed commit (queue.ndjson is shorter than what was committed): restart the receiver.`
    )
    await expect(state.update({ add: ['c'] }, 3000)).rejects.toThrow(broken)
    expect(await state.writable()).toBe(false)
  })
})

describe('opening the folder after a crash', () => {
  it('drops the changes of a commit that did not end (never answered 202)', async () => {
    const state = await openState()
    await state.update({ add: ['a'] }, 1000)
    await state.close()
    // Killed after writing a commit's changes, before its last line was whole.
    const uncommitted = JSON.stringify({ seq: 1, acceptedAt: 2000, change: change('b') })
    writeFileSync(queuePath(), `${uncommitted}\n{"at":3000,"inp`, { flag: 'a' })
    const again = await openState()
    expect(again.skipped).toBe(0)
    expect(readFileSync(queuePath(), 'utf8')).not.toContain('"b"')
    await again.update({ add: ['c'] }, 3000)
    expect(await keysWaiting(again)).toEqual(['a', 'c'])
  })

  it('sends nothing twice that was noted done, and counts lines it cannot read', async () => {
    const state = await openState()
    await state.update({ add: ['a', 'b'] }, 1000)
    await state.done(state.next()!)
    await state.close()
    writeFileSync(queuePath(), 'not a line of ours\n', { flag: 'a' })
    const again = await openState()
    expect(again.skipped).toBe(1)
    expect(await keysWaiting(again)).toEqual(['b'])
  })
})

describe('the queue', () => {
  it('holds only what it must keep when opened again: what waits, then the memory', async () => {
    const state = await openState()
    await state.update({ add: ['a', 'b'] }, 1000)
    await state.done(state.next()!)
    expect(queueLines().at(-1)).toEqual({ done: expect.any(Number) })
    await state.close()
    await openState()
    expect(queueLines().map(line => line.change?.key ?? Object.keys(line)[0])).toEqual([
      'b',
      'memory'
    ])
  })

  it('is rewritten once the lines of changes done pass a mebibyte, keeping what waits', async () => {
    const state = await openState()
    const big = Array.from({ length: 12 }, (_, index) => `big${index}`)
    await state.update({ add: [...big, 'last'], padding: 100_000 }, 1000)
    for (let index = 0; index < 11; index++) await state.done(state.next()!)
    expect(statSync(queuePath()).size).toBeLessThan(250_000)
    expect(await keysWaiting(state)).toEqual(['big11', 'last'])
  })

  it('is compacted every thousand commits, so that opening applies no more', async () => {
    const state = await openState()
    for (let index = 0; index < 999; index++) await state.update({ note: [`n${index}`] }, index)
    expect(queueLines()).toHaveLength(1000)
    await state.update({ add: ['a'], note: ['n999'] }, 999)
    expect(queueLines()).toEqual([
      { seq: 0, acceptedAt: 999, change: expect.objectContaining({ key: 'a' }) },
      { memory: memoryToJson(state.memory) }
    ])
    await state.close()
    expect((await openState()).memory).toEqual(state.memory)
  })

  it('compacted while a change is being sent, sends it once and loses none', async () => {
    const state = await openState()
    await state.update({ add: ['x', 'a', 'b'] }, 1000)
    await state.done(state.next()!)
    const sending = state.next()!
    // A commit that makes the past outweigh what waits: the queue is compacted.
    await state.update({ note: ['n'], filler: 'f'.repeat(2 * 1024 * 1024) }, 2000)
    expect(queueLines()[0]).toMatchObject({ change: { key: 'a' } })
    await state.done(sending)
    expect(state.read(state.next()!).key).toBe('b')
    await state.close()
    expect(await keysWaiting(await openState())).toEqual(['b'])
  })

  it('wakes whoever waits for a change once one is committed', async () => {
    const state = await openState()
    const arrived = state.arrival(new AbortController().signal)
    await state.update({ add: ['a'] }, 1000)
    await arrived
    expect(state.next()).toBeDefined()
  })
})

describe('the folder follows the output files’ rules', () => {
  it('is made when missing, for its owner alone', async () => {
    await openState()
    expect(statSync(dir).mode & 0o777).toBe(0o700)
  })

  it('is never a symbolic link', async () => {
    const real = join(dir, '..', 'real')
    mkdirSync(real)
    symlinkSync(real, dir)
    await expect(openState()).rejects.toThrow(/is a symbolic link: give the folder itself/)
  })

  it.each(['queue.ndjson', 'queue.ndjson.tmp'])('follows no link at %s', async name => {
    mkdirSync(dir)
    const target = join(dir, '..', 'elsewhere')
    writeFileSync(target, 'kept')
    symlinkSync(target, join(dir, name))
    await expect(openState()).rejects.toThrow(StateError)
    await expect(openState()).rejects.toThrow(/is a symbolic link, which is never followed/)
    expect(readFileSync(target, 'utf8')).toBe('kept')
  })

  it('reads regular files only', async () => {
    mkdirSync(dir)
    execFileSync('mkfifo', [join(dir, 'queue.ndjson')])
    await expect(openState()).rejects.toThrow(/queue\.ndjson is not a regular file/)
  })
})

describe('the lock', () => {
  it('keeps a second receiver out of the folder until the first closes it', async () => {
    const first = await openState()
    await expect(StateFolder.open(dir, apply)).rejects.toThrow(
      new StateError(
        `Another receiver uses ${dir}: stop it first, or give each receiver its own folder.`
      )
    )
    await first.close()
    await expect(openState()).resolves.toBeInstanceOf(StateFolder)
  })

  it('leaves alone what is not its socket', async () => {
    mkdirSync(dir)
    writeFileSync(join(dir, 'receiver.lock'), 'mine')
    await expect(openState()).rejects.toThrow(/receiver\.lock is not the receiver's lock/)
    expect(readFileSync(join(dir, 'receiver.lock'), 'utf8')).toBe('mine')
  })

  it('is released on close: its socket is gone', async () => {
    const state = await openState()
    expect(existsSync(join(dir, 'receiver.lock'))).toBe(true)
    await state.close()
    expect(existsSync(join(dir, 'receiver.lock'))).toBe(false)
  })
})

/** A secret's file: read to its end within 64 KiB and a time, or a problem that names it. */
import { describe, expect, it } from '@jest/globals'
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MAX_SECRET_FILE_BYTES, readSecretFile } from '../../src/values/secret-file.ts'

const folder = mkdtempSync(join(tmpdir(), 'cta-secret-'))
let files = 0
function file(content: string | Buffer): string {
  const path = join(folder, `key-${files++}`)
  writeFileSync(path, content)
  return path
}
/** Read as the command line reads --api-key-file. */
const read = (path: string, options: { timeoutMs: number }) =>
  readSecretFile(path, { name: '--api-key-file', ...options })

function fifo(): string {
  const path = join(folder, `fifo-${files++}`)
  execFileSync('mkfifo', [path])
  return path
}

describe('a secret file', () => {
  it('gives the secret without its final line break', async () => {
    expect(await read(file('k-file\n'), { timeoutMs: 5000 })).toEqual({ secret: 'k-file' })
    expect(await read(file('k-file\r\n'), { timeoutMs: 5000 })).toEqual({ secret: 'k-file' })
  })

  it('may hold 64 KiB, and not a byte more: the problem never shows what it holds', async () => {
    const full = 'k'.repeat(MAX_SECRET_FILE_BYTES)
    expect(await read(file(full), { timeoutMs: 5000 })).toEqual({ secret: full })
    expect(await read(file(`${full}!`), { timeoutMs: 5000 })).toEqual({
      problem: '--api-key-file is too large: more than 64 KiB.'
    })
  })

  it('that never ends (/dev/zero) is too large', async () => {
    expect(await read('/dev/zero', { timeoutMs: 5000 })).toEqual({
      problem: '--api-key-file is too large: more than 64 KiB.'
    })
  })

  it('that is missing could not be read, said with its code', async () => {
    expect(await read(join(folder, 'missing'), { timeoutMs: 5000 })).toEqual({
      problem: '--api-key-file could not be read (ENOENT).'
    })
  })

  it('that is a FIFO no one writes was not read within the time given', async () => {
    expect(await read(fifo(), { timeoutMs: 200 })).toEqual({
      problem: '--api-key-file was not read to its end within 0.2 s.'
    })
  })

  it('that is a FIFO written a moment later is read', async () => {
    const path = fifo()
    const reading = read(path, { timeoutMs: 10_000 })
    await new Promise(resolve => setTimeout(resolve, 100))
    await writeFile(path, 'k-fifo\n')
    expect(await reading).toEqual({ secret: 'k-fifo' })
  })

  it('that is a pipe whose writer writes late (/dev/stdin, <(…)) is read', async () => {
    const path = fifo()
    const writer = spawn('sh', ['-c', `exec 3>"$0"; sleep 0.2; echo k-pipe >&3`, path])
    const closed = once(writer, 'close')
    expect(await read(path, { timeoutMs: 10_000 })).toEqual({ secret: 'k-pipe' })
    await closed
  })
})

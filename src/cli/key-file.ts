/**
 * The API key's file, within bounds of size and time. Opened without blocking: a FIFO that never
 * gets a writer holds no thread of the pool, and is polled until a deadline.
 */
import { constants } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { formatSeconds } from '../helpers/text.ts'

/** The most a key file may hold: a key is a few hundred bytes. */
export const MAX_KEY_FILE_BYTES = 64 * 1024

/** The key, without its trailing line break; or why it is unusable, never what the file holds. */
export async function readKeyFile(
  path: string,
  { timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal }
): Promise<{ key: string } | { problem: string }> {
  const deadline = Date.now() + timeoutMs
  // Loaded here, as only --api-key-file reads a file: node:fs/promises costs every start ~5 ms.
  const { open } = await import('node:fs/promises')
  const buffer = Buffer.alloc(MAX_KEY_FILE_BYTES + 1)
  const problem = (what: string) => ({ problem: `--api-key-file ${what}.` })
  let file: FileHandle | undefined
  try {
    file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
    // A pipe read before its writer opens it is at its end: only its first bytes end the wait.
    const pipe = (await file.stat()).isFIFO()
    let length = 0
    for (;;) {
      // An empty pipe whose writer is still open says EAGAIN: more may come.
      const read = await file.read(buffer, length, buffer.length - length, null).then(
        ({ bytesRead }) => bytesRead,
        (error: NodeJS.ErrnoException) =>
          error.code === 'EAGAIN' ? undefined : Promise.reject(error)
      )
      length += read ?? 0
      if (length > MAX_KEY_FILE_BYTES)
        return problem(`is too large: more than ${MAX_KEY_FILE_BYTES / 1024} KiB`)
      if (read === 0 && (!pipe || length > 0))
        return { key: buffer.toString('utf8', 0, length).replace(/\r?\n$/, '') }
      if (Date.now() >= deadline)
        return problem(`was not read to its end within ${formatSeconds(timeoutMs)}`)
      if (signal?.aborted) return problem('was not read to its end: the run was cancelled')
      if (!read) await sleep(Math.min(20, deadline - Date.now()))
    }
  } catch (error) {
    return problem(`could not be read (${(error as NodeJS.ErrnoException).code ?? 'an error'})`)
  } finally {
    await file?.close()
  }
}

/**
 * A secret's file (an API key, a webhook secret), within bounds of size and time. Opened without
 * blocking: a FIFO that never gets a writer holds no thread of the pool, and is polled until a
 * deadline. A link is followed: a Kubernetes secret's file is one.
 */
import { constants } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { formatSeconds } from '../helpers/text.ts'

/** The most a secret's file may hold: a secret is a few hundred bytes. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024

/**
 * The secret, without its trailing line break; or why it is unusable, never what the file holds.
 * `name` is how the user gave the file (a flag).
 */
export async function readSecretFile(
  path: string,
  { name, timeoutMs, signal }: { name: string; timeoutMs: number; signal?: AbortSignal }
): Promise<{ secret: string } | { problem: string }> {
  const deadline = Date.now() + timeoutMs
  // Loaded here, as few runs read a file: node:fs/promises costs every start ~5 ms.
  const { open } = await import('node:fs/promises')
  const buffer = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1)
  const problem = (what: string) => ({ problem: `${name} ${what}.` })
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
      if (length > MAX_SECRET_FILE_BYTES)
        return problem(`is too large: more than ${MAX_SECRET_FILE_BYTES / 1024} KiB`)
      if (read === 0 && (!pipe || length > 0))
        return { secret: buffer.toString('utf8', 0, length).replace(/\r?\n$/, '') }
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

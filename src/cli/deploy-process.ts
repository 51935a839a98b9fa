/** The wrapped deploy: a child process without a shell, with the wrapper's streams and env. */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'
import { existsSync } from 'node:fs'
import { constants } from 'node:os'

/** The signals that cancel a deploy: while it runs they reach the child, not the wrapper. */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']

/**
 * How the deploy ended, as a job ends, with the shell's exit status (128 plus the number of the
 * signal that ended it) and its times in milliseconds since the epoch; or why it could not start.
 */
export type DeployEnd =
  | {
      started: true
      outcome: 'success' | 'failure' | 'cancelled'
      exitCode: number
      signal?: NodeJS.Signals
      startedAt: number
      finishedAt: number
      /** With `stdout`: whether its output, if any, ended with a line break. */
      outputEndsLine?: boolean
    }
  | { started: false; exitCode: 126 | 127; message: string }

export interface DeployOptions {
  /** The child's environment, and the PATH a bare command name is looked up in. */
  env?: NodeJS.ProcessEnv
  clock?: () => number
  /**
   * Run from a terminal (stdin is one, unless told), whose Ctrl-C reaches the deploy too: SIGINT
   * is not passed on a second time, which would cut short a deploy cleaning up after the first.
   */
  interactive?: boolean
  /** Takes the deploy's standard output, piped instead of shared, chunk by chunk. */
  stdout?: (chunk: Buffer) => void
}

/**
 * Runs the deploy to its end, and after all of its output (what the caller writes next follows
 * it). Until then a SIGINT, SIGTERM or SIGHUP that reaches this process is passed to the child
 * instead of ending this process, and makes the outcome `cancelled`, however it then exits: a
 * signal the deploy sent itself, or got from elsewhere, is a failure like any other.
 */
export function runDeploy(
  command: string,
  args: readonly string[],
  { env, clock = Date.now, interactive = Boolean(process.stdin.isTTY), stdout }: DeployOptions = {}
): Promise<DeployEnd> {
  return new Promise(resolve => {
    const startedAt = clock()
    let child: ChildProcess
    try {
      const stdio: StdioOptions = ['inherit', stdout ? 'pipe' : 'inherit', 'inherit']
      child = spawn(command, args, { shell: false, stdio, env })
    } catch (error) {
      // Node throws some failures to start (ENOTDIR, E2BIG, ENAMETOOLONG) instead of emitting them.
      return resolve(notStarted(command, error))
    }
    let cancelled = false
    const forward = (signal: NodeJS.Signals): void => {
      cancelled = true
      if (signal !== 'SIGINT' || !interactive) child.kill(signal)
    }
    let lastByte: number | undefined
    child.stdout?.on('data', (chunk: Buffer) => {
      lastByte = chunk.at(-1) ?? lastByte
      stdout?.(chunk)
    })
    for (const signal of FORWARDED_SIGNALS) process.on(signal, forward)
    const stopForwarding = (): void => {
      for (const signal of FORWARDED_SIGNALS) process.off(signal, forward)
    }
    child.on('error', error => {
      // A child with a pid has started: its error is a failed kill, and its exit still comes.
      if (child.pid !== undefined) return
      stopForwarding()
      resolve(notStarted(command, error))
    })
    // Signals are the deploy's only while it lives; its output may outlast it (a child of its own).
    let finishedAt = startedAt
    child.once('exit', () => {
      stopForwarding()
      finishedAt = clock()
    })
    child.once('close', (code, signal) => {
      const exitCode = signal === null ? (code ?? 1) : 128 + constants.signals[signal]
      const ended = exitCode === 0 ? 'success' : 'failure'
      const outcome = cancelled ? 'cancelled' : ended
      resolve({
        ...{ started: true, outcome, exitCode, startedAt, finishedAt },
        ...(signal !== null && { signal }),
        ...(stdout && { outputEndsLine: lastByte === undefined || lastByte === 0x0a })
      })
    })
  })
}

/** A failure to start, worded and numbered as a shell would: 127 not found, 126 cannot be run. */
function notStarted(command: string, error: unknown): DeployEnd {
  const code = (error as NodeJS.ErrnoException).code ?? String(error)
  const name = `The deploy command ${JSON.stringify(command)}`
  return {
    started: false,
    exitCode: code === 'ENOENT' ? 127 : 126,
    message: why(name, code, command)
  }
}

/** Why the command could not start, by the system's code, and what to do. */
function why(name: string, code: string, command = ''): string {
  if (code === 'EACCES')
    return `${name} is not executable: make it an executable file (chmod +x), or run it through its interpreter.`
  if (code !== 'ENOENT') return `${name} could not be started (${code}).`
  // An ENOENT for a file that exists: the kernel's for a script whose #! interpreter is missing.
  if (command.includes('/') && existsSync(command))
    return `${name} cannot be run: the interpreter on its #! line was not found.`
  return `${name} was not found: give its path, or add its folder to PATH.`
}

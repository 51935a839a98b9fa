/**
 * The wrapped deploy: a child process without a shell, with the wrapper's standard streams and
 * environment, the signals that stop a deploy passed on to it, and how it ended as a job's
 * outcome and the exit status the wrapper gives back.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { constants } from 'node:os'

/** The signals that cancel a deploy: while it runs they reach the child, not the wrapper. */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']

export type DeployEnd =
  | {
      started: true
      /** As a job ends: `cancelled` only when the child itself was ended by a forwarded signal. */
      outcome: 'success' | 'failure' | 'cancelled'
      /** The child's exit status, or 128 plus the number of the signal that ended it. */
      exitCode: number
      /** The signal that ended the child, if one did. */
      signal?: NodeJS.Signals
      /** Milliseconds since the epoch, just before the child was started. */
      startedAt: number
      /** Milliseconds since the epoch, when the child had ended. */
      finishedAt: number
    }
  | {
      started: false
      /** As a shell says it: 127 for a command not found, 126 for one that cannot be run. */
      exitCode: 126 | 127
      /** One line for a person, naming the command as given. */
      message: string
    }

export interface DeployOptions {
  /** The child's environment (and its PATH, where a bare command name is looked up). */
  env?: NodeJS.ProcessEnv
  /** Milliseconds since the epoch; `Date.now` unless a test gives its own. */
  clock?: () => number
  /**
   * Run from a terminal (stdin is one, unless told): its Ctrl-C reaches the whole foreground
   * process group, the deploy included, so SIGINT is not passed on a second time. A deploy that
   * cleans up on its first SIGINT would be cut short by a second.
   */
  interactive?: boolean
}

/**
 * Runs the deploy to its end. Until then a SIGINT, SIGTERM or SIGHUP that reaches this process
 * is passed to the child instead of ending this process; the outcome is read from how the child
 * ended, never from what this process received (a terminal's Ctrl-C reaches both).
 */
export function runDeploy(
  command: string,
  args: readonly string[],
  options: DeployOptions = {}
): Promise<DeployEnd> {
  const clock = options.clock ?? Date.now
  return new Promise(resolve => {
    const startedAt = clock()
    let child: ChildProcess
    try {
      child = spawn(command, args, { shell: false, stdio: 'inherit', env: options.env })
    } catch (error) {
      // Node throws some failures to start (ENOTDIR, E2BIG, ENAMETOOLONG) instead of emitting them.
      resolve(notStarted(command, error))
      return
    }
    const interactive = options.interactive ?? Boolean(process.stdin.isTTY)
    const forward = (signal: NodeJS.Signals): void => {
      if (signal !== 'SIGINT' || !interactive) child.kill(signal)
    }
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
    child.once('exit', (code, signal) => {
      stopForwarding()
      const ended = { started: true, startedAt, finishedAt: clock() } as const
      if (signal === null) {
        const exitCode = code ?? 1
        resolve({ ...ended, outcome: exitCode === 0 ? 'success' : 'failure', exitCode })
      } else {
        const outcome = FORWARDED_SIGNALS.includes(signal) ? 'cancelled' : 'failure'
        resolve({ ...ended, outcome, exitCode: 128 + constants.signals[signal], signal })
      }
    })
  })
}

/** A failure to start, worded and numbered as a shell would: 127 not found, 126 cannot be run. */
function notStarted(command: string, error: unknown): DeployEnd {
  const code = (error as NodeJS.ErrnoException).code ?? String(error)
  const name = `The deploy command ${JSON.stringify(command)}`
  if (code === 'ENOENT') {
    // The kernel says ENOENT too for a script whose #! interpreter is missing.
    const message =
      command.includes('/') && existsSync(command)
        ? `${name} cannot be run: the interpreter on its #! line was not found.`
        : `${name} was not found: give its path, or add its folder to PATH.`
    return { started: false, exitCode: 127, message }
  }
  const message =
    code === 'EACCES'
      ? `${name} is not executable: make it an executable file (chmod +x), or run it through its interpreter.`
      : `${name} could not be started (${code}).`
  return { started: false, exitCode: 126, message }
}

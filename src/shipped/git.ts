/**
 * The one way this project runs git, for the CI's context and for what shipped: no shell, a list
 * of arguments after options that turn off the pager, locks, fsmonitor and hooks, never a fetch
 * or a transport (a partial clone's missing object stays missing), in English, cut at a bound,
 * and in a process group of its own that is killed whole: nothing git starts outlives it.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { attempt } from '../errors.ts'
import type { Env } from '../settings.ts'
import { LookupError } from './warning.ts'

/** Any other answer: a SHA, a count, a tag's name, a remote's URL, an error. */
const MAX_ANSWER_BYTES = 64 * 1024
/** Paths as they are, no fsmonitor and no hooks. */
const SAFE_CONFIG = ['core.quotepath=off', 'core.fsmonitor=false', 'core.hooksPath=/dev/null']
/** Before every command: SAFE_CONFIG, no pager and no lock. */
const SAFE_OPTIONS = [
  '--no-pager',
  '--no-optional-locks',
  ...SAFE_CONFIG.flatMap(setting => ['-c', setting])
]
/**
 * No fetch, not even a partial clone's of an object it lacks (with the repository's ssh command):
 * git 2.44 and 2.39.4 read GIT_NO_LAZY_FETCH; to older git, an empty list allows no protocol.
 */
const NO_FETCH = { GIT_NO_LAZY_FETCH: '1', GIT_ALLOW_PROTOCOL: '', GIT_TERMINAL_PROMPT: '0' }
/** What git printed (cut at the bound), and on a non-zero exit what it said on stderr. */
export type GitAnswer = { out: string; cut: boolean; said?: string }
export type Git = (args: string[], maxBytes?: number, keep?: Keep) => Promise<GitAnswer>
/** What to hold of each chunk git prints: the rest is never held. */
export type Keep = (printed: Buffer) => Buffer
/**
 * The variables the door hands git: its own, without any GIT_* (a CI's GIT_DIR, GIT_EXTERNAL_DIFF
 * or GIT_CONFIG_PARAMETERS would point git elsewhere or name a program), and without the locale.
 */
export function gitEnvironment(env: Env): Env {
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !/^(?:GIT_|LC_|LANG)/.test(name.toUpperCase()))
  )
}

/** Whether the folder or one above it holds a .git (a folder, or a worktree's file). */
export function hasGitFolder(cwd: string): boolean {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return true
    if (dirname(dir) === dir) return false
  }
}

/**
 * git in `cwd` with `env` (gitEnvironment's), in English, cut at `maxBytes` (of what `keep` keeps
 * as git prints it), in its own process group, killed when git ends or overflows and when `signal`
 * aborts: nothing it started outlives it. Rejects with a LookupError when git cannot start or
 * refuses the checkout, or the signal's.
 */
export function gitIn(cwd: string, env: Env, signal: AbortSignal): Git {
  const variables = { ...env, ...NO_FETCH, LC_ALL: 'C' }
  const options = { cwd, env: variables, detached: true, windowsHide: true, stdio: 'pipe' } as const
  return (args, maxBytes = MAX_ANSWER_BYTES, keep) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason)
      const child = spawn('git', [...SAFE_OPTIONS, ...args], options)
      // Without process groups (Windows), git alone.
      const stop = () =>
        attempt(() => process.kill(-child.pid!, 'SIGKILL')) ?? child.kill('SIGKILL')
      let cut = false
      const [out, said] = [child.stdout, child.stderr].map(from => {
        const chunks: Buffer[] = []
        let room = maxBytes
        from.on('data', (printed: Buffer) => {
          const chunk = keep && from === child.stdout ? keep(printed) : printed
          chunks.push(chunk.subarray(0, Math.max(room, 0)))
          room -= chunk.length
          if (room < 0) cut = true
          if (cut) stop()
        })
        return () => Buffer.concat(chunks).toString('utf8')
      })
      signal.addEventListener('abort', stop, { once: true })
      child.on('error', ({ code }: { code?: string }) => {
        const missing = `git could not start in ${cwd} (${code}: no git program, or no such folder)`
        reject(new LookupError(missing))
      })
      child.on('close', code => {
        stop()
        signal.removeEventListener('abort', stop)
        if (code === 0 || cut) return resolve({ out: out(), cut })
        if (signal.aborted) return reject(signal.reason)
        const refusal = refusalIn(said(), cwd)
        return refusal ? reject(refusal) : resolve({ out: out(), cut, said: said() })
      })
    })
}

/** git's refusal to read the checkout at all, in words, with git's own fix when it gives one. */
function refusalIn(said: string, cwd: string): LookupError | undefined {
  if (said.includes('dubious ownership')) {
    const lines = said.split('\n').map(line => line.trim())
    const fix = lines.find(line => line.startsWith('git config --global --add safe.directory '))
    const trust = fix ? `; if you trust it, run: ${fix}` : ''
    return new LookupError(
      `git refuses the checkout in ${cwd}, which another user owns ("dubious ownership")${trust}`
    )
  }
  return said.includes('not a git repository')
    ? new LookupError(`${cwd} is not in a git checkout`)
    : undefined
}

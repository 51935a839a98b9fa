/**
 * Runs the bundled action as a child process, the way the runner does: INPUT_* variables with
 * action.yml's defaults applied, the GITHUB_* context, an event payload file, and the
 * GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files. Inside Jest the bundle is built from the current
 * sources (support/bundle.ts); the demo and the benchmark run dist/.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { actionEntry, NODE_24, PROJECT_ROOT } from './bundle.ts'

export { NODE_24, PROJECT_ROOT }
const PEAK_RSS_PROBE = join(PROJECT_ROOT, '__tests__', 'support', 'peak-rss.mjs')

export interface ActionRun {
  exitCode: number | null
  stdout: string
  stderr: string
  /** Outputs parsed from the GITHUB_OUTPUT file. */
  outputs: Record<string, string>
  /** The GITHUB_STEP_SUMMARY file's content. */
  summary: string
  durationMs: number
  /** When the process exited, in milliseconds since it was spawned. */
  exitAtMs: number
  /** The signal that ended the process, if one did. */
  signal: NodeJS.Signals | null
  /** Each chunk of stdout with the milliseconds since the start at which it arrived. */
  stdoutChunks: Array<{ atMs: number; text: string }>
  /** The process's peak RSS in bytes, when measurePeakRss was asked for. */
  peakRssBytes?: number
}

export interface RunOptions {
  /** Inputs by their action.yml names; action.yml's defaults fill the rest. */
  inputs: Record<string, string>
  eventName?: string
  payload?: unknown
  /** GITHUB_* and other variables, over a realistic default context. */
  env?: Record<string, string | undefined>
  /** PEM file the child trusts (NODE_EXTRA_CA_CERTS). */
  caCertPath?: string
  timeoutMs?: number
  /** Arguments for node before the script (the benchmark preloads an RSS probe). */
  nodeArgs?: string[]
  /** Measure the process's peak RSS (a probe preloaded with --import reads it on exit). */
  measurePeakRss?: boolean
  /** Called with the child as soon as it is spawned: to signal it later, say. */
  onSpawn?: (child: ChildProcess) => void
}

interface ActionYaml {
  inputs: Record<string, { default?: string }>
}

/**
 * Inputs this suite sets unless a test does: the lookup of what a change ships is tested in
 * e2e/shipped.test.ts and e2e/services.test.ts, which ask for it against the fake GitHub API.
 */
const SUITE_DEFAULTS: Record<string, string> = { 'include-commits': 'false' }

/** The token the runner gives `${{ github.token }}` in these runs. */
export const TEST_GITHUB_TOKEN = 'ghs_testTokenForTheEndToEndSuite0000'
/** The expressions action.yml's defaults may use, as the runner would evaluate them here. */
const DEFAULT_EXPRESSIONS: Record<string, string> = { 'github.token': TEST_GITHUB_TOKEN }

/** action.yml's input defaults, as the runner applies them (expressions evaluated). */
export function actionDefaults(): Record<string, string> {
  const action = parse(readFileSync(join(PROJECT_ROOT, 'action.yml'), 'utf8')) as ActionYaml
  const defaults: Record<string, string> = {}
  for (const [name, input] of Object.entries(action.inputs)) {
    if (input.default === undefined) continue
    defaults[name] = String(input.default).replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_, expression) => {
      const value = DEFAULT_EXPRESSIONS[expression as string]
      if (value === undefined)
        throw new Error(`action.yml: no test value for \${{ ${expression} }}`)
      return value
    })
  }
  return defaults
}

/** The variables a runner sets for a push to main of octo-org/octo-repo. */
export function runnerContext(workspace: string): Record<string, string> {
  return {
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_REPOSITORY: 'octo-org/octo-repo',
    GITHUB_REPOSITORY_OWNER: 'octo-org',
    GITHUB_SHA: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
    GITHUB_REF: 'refs/heads/main',
    GITHUB_REF_NAME: 'main',
    GITHUB_REF_TYPE: 'branch',
    GITHUB_ACTOR: 'octocat',
    GITHUB_WORKFLOW: 'Deploy',
    GITHUB_JOB: 'deploy',
    GITHUB_RUN_ID: '9876543210',
    GITHUB_RUN_NUMBER: '42',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_SERVER_URL: 'https://github.com',
    // Nothing listens here: no test may reach the real GitHub API.
    GITHUB_API_URL: 'https://127.0.0.1:9',
    GITHUB_WORKSPACE: workspace,
    RUNNER_OS: 'Linux',
    RUNNER_TEMP: workspace
  }
}

/** Parses the runner's output file: `name=value` lines and `name<<DELIMITER` heredocs. */
export function parseOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const heredoc = /^([^=<]+)<<(.+)$/.exec(lines[i])
    if (heredoc) {
      const [, name, delimiter] = heredoc
      const value: string[] = []
      for (i++; i < lines.length && lines[i] !== delimiter; i++) value.push(lines[i])
      outputs[name] = value.join('\n')
    } else if (lines[i].includes('=')) {
      const at = lines[i].indexOf('=')
      outputs[lines[i].slice(0, at)] = lines[i].slice(at + 1)
    }
  }
  return outputs
}

export async function runAction(options: RunOptions): Promise<ActionRun> {
  const dir = mkdtempSync(join(tmpdir(), 'cta-run-'))
  try {
    const outputPath = join(dir, 'output.txt')
    const summaryPath = join(dir, 'summary.md')
    const eventPath = join(dir, 'event.json')
    writeFileSync(outputPath, '')
    writeFileSync(summaryPath, '')
    writeFileSync(eventPath, JSON.stringify(options.payload ?? {}))

    const rssPath = join(dir, 'peak-rss.txt')
    // Built from nothing: no proxy, CA or Node option of the test process leaks into the child.
    const env: Record<string, string | undefined> = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      ...runnerContext(dir),
      GITHUB_EVENT_NAME: options.eventName ?? 'push',
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_OUTPUT: outputPath,
      GITHUB_STEP_SUMMARY: summaryPath,
      NODE_EXTRA_CA_CERTS: options.caCertPath,
      CTA_PEAK_RSS_FILE: options.measurePeakRss === true ? rssPath : undefined,
      ...options.env
    }
    const inputs = { ...actionDefaults(), ...SUITE_DEFAULTS, ...options.inputs }
    for (const [name, value] of Object.entries(inputs)) {
      env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value
    }

    const probe = options.measurePeakRss === true ? ['--import', PEAK_RSS_PROBE] : []
    const entry = await actionEntry()
    const started = performance.now()
    const run = await spawnNode(
      [...probe, ...(options.nodeArgs ?? []), entry],
      env,
      dir,
      options.timeoutMs,
      options.onSpawn
    )
    return {
      ...run,
      outputs: parseOutputFile(readFileSync(outputPath, 'utf8')),
      summary: readFileSync(summaryPath, 'utf8'),
      durationMs: performance.now() - started,
      peakRssBytes: existsSync(rssPath) ? Number(readFileSync(rssPath, 'utf8')) * 1024 : undefined
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A runAction bound to a service: its key and address are given, other inputs per call. */
export function actionAgainst(
  service: { apiKey: string; url: string },
  caCertPath: string
): (inputs: Record<string, string>, options?: Partial<RunOptions>) => Promise<ActionRun> {
  return (inputs, options = {}) =>
    runAction({
      inputs: { 'api-key': service.apiKey, 'base-url': service.url, ...inputs },
      caCertPath,
      ...options
    })
}

export interface NodeRun {
  exitCode: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  stdoutChunks: Array<{ atMs: number; text: string }>
  /** When the process exited, in milliseconds since it was spawned. */
  exitAtMs: number
}

/**
 * A child whose resident memory passes this is killed: a probe of unbounded memory must fail its
 * test, not take the machine down (the defect once took 8 GB).
 */
const MAX_CHILD_RSS_BYTES = 2 * 1024 ** 3
const RSS_POLL_MS = 100

/** The resident memory of a live process, from /proc (Linux); undefined elsewhere. */
function residentBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

/** Runs the project's Node 24 with these arguments; resolves when it exits. */
export function spawnNode(
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string,
  timeoutMs = 60_000,
  onSpawn?: (child: ChildProcess) => void
): Promise<NodeRun> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now()
    const child = spawn(NODE_24, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const stdoutChunks: Array<{ atMs: number; text: string }> = []
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      stdoutChunks.push({ atMs: performance.now() - started, text: chunk })
    })
    child.stderr.setEncoding('utf8').on('data', chunk => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    const watch = setInterval(() => {
      const rss = child.pid === undefined ? undefined : residentBytes(child.pid)
      if (rss !== undefined && rss > MAX_CHILD_RSS_BYTES) {
        stderr += `[test] killed: resident memory passed ${MAX_CHILD_RSS_BYTES} bytes\n`
        child.kill('SIGKILL')
      }
    }, RSS_POLL_MS)
    let exitAtMs = 0
    child.on('exit', () => (exitAtMs = performance.now() - started))
    child.on('error', reject)
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer)
      clearInterval(watch)
      resolvePromise({ exitCode, signal, stdout, stderr, stdoutChunks, exitAtMs })
    })
    onSpawn?.(child)
  })
}

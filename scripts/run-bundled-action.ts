/**
 * Runs the bundled action as a child process the way the runner does: INPUT_* variables with
 * action.yml's defaults applied, the GITHUB_* context, an event payload file, and the
 * GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files. The demo and the benchmark run dist/index.js; the
 * end-to-end tests (__tests__/support/run-action.ts) run a bundle of the current sources.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const DIST = join(PROJECT_ROOT, 'dist')
/** The Node the runner would use (node24), from the "node" devDependency. */
export const NODE_24 = join(PROJECT_ROOT, 'node_modules', '.bin', 'node')
/** Preloaded with --import when measurePeakRss is asked for: writes the peak RSS on exit. */
const PEAK_RSS_PROBE = join(PROJECT_ROOT, 'scripts', 'peak-rss.mjs')
/** A run that takes longer than this is killed. */
const DEFAULT_TIMEOUT_MS = 60_000

export interface ActionRun extends NodeRun {
  /** Outputs parsed from the GITHUB_OUTPUT file. */
  outputs: Record<string, string>
  /** The GITHUB_STEP_SUMMARY file's content. */
  summary: string
  /** What the step saved for the post step (the GITHUB_STATE file), by name. */
  state: Record<string, string>
  durationMs: number
  /** The process's peak RSS in bytes, when measurePeakRss was asked for. */
  peakRssBytes?: number
}

export interface RunOptions {
  /** Inputs by their action.yml names, over inputDefaults and action.yml's defaults. */
  inputs: Record<string, string>
  /** Default 'push'. */
  eventName?: string
  payload?: unknown
  /** GITHUB_* and other variables, over the default context of runnerContext(). */
  env?: Record<string, string | undefined>
  /** PEM file the child trusts (NODE_EXTRA_CA_CERTS). */
  caCertPath?: string
  timeoutMs?: number
  /** Arguments for node before the script. */
  nodeArgs?: string[]
  /** Measure the process's peak RSS (a probe preloaded with --import reads it on exit). */
  measurePeakRss?: boolean
  /** Called with the child as soon as it is spawned: to signal it later, say. */
  onSpawn?: (child: ChildProcess) => void
  /** The script to run. Default dist/index.js. */
  entry?: string
  /** Values of the expressions in action.yml's defaults: see actionDefaults(). */
  expressions?: Record<string, string>
  /** Inputs between action.yml's defaults and `inputs`: a caller's own defaults. */
  inputDefaults?: Record<string, string>
  /** State a main step saved: the post step sees each as STATE_<name>, as the runner passes it. */
  state?: Record<string, string>
}

let inputsOfAction: Record<string, { default?: string }> | undefined

/** action.yml's inputs by name, read once. */
export function actionInputs(): Record<string, { default?: string }> {
  inputsOfAction ??= (
    parse(readFileSync(join(PROJECT_ROOT, 'action.yml'), 'utf8')) as {
      inputs: Record<string, { default?: string }>
    }
  ).inputs
  return inputsOfAction
}

/**
 * action.yml's input defaults, as the runner applies them. Without `expressions`, a default the
 * runner would evaluate (`${{ github.token }}`) is '': such runs have no token unless given one.
 * With them, each `${{ … }}` takes its value from the map, and one the map lacks throws.
 */
export function actionDefaults(expressions?: Record<string, string>): Record<string, string> {
  const defaults: Record<string, string> = {}
  for (const [name, input] of Object.entries(actionInputs())) {
    if (input.default === undefined) continue
    const text = String(input.default)
    if (expressions === undefined) {
      defaults[name] = text.includes('${{') ? '' : text
      continue
    }
    defaults[name] = text.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_, expression: string) => {
      const value = expressions[expression]
      if (value === undefined) throw new Error(`action.yml: no value for \${{ ${expression} }}`)
      return value
    })
  }
  return defaults
}

/** A GitLab CI deploy job's variables, as GitLab documents them: the command line reads them. */
export function gitlabJob(
  sha = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'
): Record<string, string> {
  return {
    GITLAB_CI: 'true',
    CI: 'true',
    CI_COMMIT_SHA: sha,
    CI_COMMIT_REF_NAME: 'main',
    CI_PROJECT_PATH: 'acme/shop',
    CI_PROJECT_URL: 'https://gitlab.example.com/acme/shop',
    CI_PIPELINE_ID: '4242',
    CI_PIPELINE_URL: 'https://gitlab.example.com/acme/shop/-/pipelines/4242',
    CI_JOB_ID: '99',
    CI_JOB_URL: 'https://gitlab.example.com/acme/shop/-/jobs/99',
    GITLAB_USER_LOGIN: 'alice',
    CI_ENVIRONMENT_NAME: 'production'
  }
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
    // Nothing listens here: a run that is not given a fake GitHub API never reaches the real one.
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

export async function runBundledAction(options: RunOptions): Promise<ActionRun> {
  const dir = mkdtempSync(join(tmpdir(), 'cta-run-'))
  try {
    const outputPath = join(dir, 'output.txt')
    const summaryPath = join(dir, 'summary.md')
    const eventPath = join(dir, 'event.json')
    const rssPath = join(dir, 'peak-rss.txt')
    const statePath = join(dir, 'state.txt')
    writeFileSync(outputPath, '')
    writeFileSync(statePath, '')
    writeFileSync(summaryPath, '')
    writeFileSync(eventPath, JSON.stringify(options.payload ?? {}))

    // Built from nothing: no proxy, CA or Node option of this process leaks into the child.
    const env: Record<string, string | undefined> = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      ...runnerContext(dir),
      GITHUB_EVENT_NAME: options.eventName ?? 'push',
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_OUTPUT: outputPath,
      GITHUB_STEP_SUMMARY: summaryPath,
      GITHUB_STATE: statePath,
      ...Object.fromEntries(
        Object.entries(options.state ?? {}).map(([name, value]) => [`STATE_${name}`, value])
      ),
      NODE_EXTRA_CA_CERTS: options.caCertPath,
      CTA_PEAK_RSS_FILE: options.measurePeakRss === true ? rssPath : undefined,
      ...options.env
    }
    const inputs = {
      ...actionDefaults(options.expressions),
      ...options.inputDefaults,
      ...options.inputs
    }
    // As the runner names them: spaces become '_', hyphens stay (INPUT_GITHUB-TOKEN).
    for (const [name, value] of Object.entries(inputs)) {
      env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value
    }

    const probe = options.measurePeakRss === true ? ['--import', PEAK_RSS_PROBE] : []
    const entry = options.entry ?? join(DIST, 'index.js')
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
      state: parseOutputFile(readFileSync(statePath, 'utf8')),
      durationMs: performance.now() - started,
      peakRssBytes: existsSync(rssPath) ? Number(readFileSync(rssPath, 'utf8')) * 1024 : undefined
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface NodeRun {
  exitCode: number | null
  /** The signal that ended the process, if one did. */
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** Each chunk of stdout with the milliseconds since the spawn at which it arrived. */
  stdoutChunks: Array<{ atMs: number; text: string }>
  /** When the process exited, in milliseconds since it was spawned. */
  exitAtMs: number
}

/**
 * A child whose resident memory passes this is killed: a run of unbounded memory must fail, not
 * take the machine down (the defect once took 8 GB).
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

/** Runs Node (the project's 24 unless told) with these arguments; resolves when it exits. */
export function spawnNode(
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
  onSpawn?: (child: ChildProcess) => void,
  node = NODE_24
): Promise<NodeRun> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now()
    const child = spawn(node, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const stdoutChunks: Array<{ atMs: number; text: string }> = []
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      stdoutChunks.push({ atMs: performance.now() - started, text: chunk })
    })
    child.stderr.setEncoding('utf8').on('data', chunk => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    const watch = setInterval(() => {
      const rss = child.pid === undefined ? undefined : residentBytes(child.pid)
      if (rss !== undefined && rss > MAX_CHILD_RSS_BYTES) {
        stderr += `[run] killed: resident memory passed ${MAX_CHILD_RSS_BYTES} bytes\n`
        child.kill('SIGKILL')
      }
    }, RSS_POLL_MS)
    let exitAtMs = 0
    child.on('exit', () => {
      exitAtMs = performance.now() - started
    })
    child.on('error', reject)
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer)
      clearInterval(watch)
      resolvePromise({ exitCode, signal, stdout, stderr, stdoutChunks, exitAtMs })
    })
    onSpawn?.(child)
  })
}

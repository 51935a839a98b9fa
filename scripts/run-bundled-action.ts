/**
 * Runs the bundled action (dist/index.js) as a child process the way the runner does, for the demo
 * and the benchmark: INPUT_* variables with action.yml's defaults applied, the GITHUB_* context,
 * an event payload file, and the GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const DIST = join(PROJECT_ROOT, 'dist')
/** The Node the runner would use (node24), from the "node" devDependency. */
export const NODE_24 = join(PROJECT_ROOT, 'node_modules', '.bin', 'node')
/** A run that takes longer than this is killed. */
const DEFAULT_TIMEOUT_MS = 60_000

export interface ActionRun {
  exitCode: number | null
  stdout: string
  stderr: string
  /** Outputs parsed from the GITHUB_OUTPUT file. */
  outputs: Record<string, string>
  /** The GITHUB_STEP_SUMMARY file's content. */
  summary: string
  durationMs: number
}

export interface RunOptions {
  /** Inputs by their action.yml names; action.yml's defaults fill the rest. */
  inputs: Record<string, string>
  /** Default 'push'. */
  eventName?: string
  payload?: unknown
  /** GITHUB_* and other variables, over the default context of runnerContext(). */
  env?: Record<string, string | undefined>
  /** PEM file the child trusts (NODE_EXTRA_CA_CERTS). */
  caCertPath?: string
  timeoutMs?: number
  /** Arguments for node before the script (the benchmark preloads an RSS probe). */
  nodeArgs?: string[]
  /** The bundle's folder. Default dist/. */
  dist?: string
}

interface ActionYaml {
  inputs: Record<string, { default?: string }>
}

/**
 * action.yml's inputs and their defaults ('' when there is none). A default the runner would
 * evaluate (`${{ github.token }}`) is '': these runs have no token unless given one.
 */
export function actionInputs(): Map<string, string> {
  const action = parse(readFileSync(join(PROJECT_ROOT, 'action.yml'), 'utf8')) as ActionYaml
  return new Map(
    Object.entries(action.inputs).map(([name, input]) => {
      const value = String(input.default ?? '')
      return [name, value.includes('${{') ? '' : value]
    })
  )
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
    // Nothing listens here: a run that is not given the fake GitHub API never reaches the real one.
    GITHUB_API_URL: 'https://127.0.0.1:9',
    GITHUB_WORKSPACE: workspace,
    RUNNER_OS: 'Linux',
    RUNNER_TEMP: workspace
  }
}

/** Parses the runner's output file: `name=value` lines and `name<<DELIMITER` heredocs. */
function parseOutputFile(text: string): Record<string, string> {
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
    writeFileSync(outputPath, '')
    writeFileSync(summaryPath, '')
    writeFileSync(eventPath, JSON.stringify(options.payload ?? {}))

    const env: Record<string, string | undefined> = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      ...runnerContext(dir),
      GITHUB_EVENT_NAME: options.eventName ?? 'push',
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_OUTPUT: outputPath,
      GITHUB_STEP_SUMMARY: summaryPath,
      NODE_EXTRA_CA_CERTS: options.caCertPath,
      ...options.env
    }
    const inputs = { ...Object.fromEntries(actionInputs()), ...options.inputs }
    // As the runner names them: spaces become '_', hyphens stay (INPUT_GITHUB-TOKEN).
    for (const [name, value] of Object.entries(inputs)) {
      env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value
    }

    const started = performance.now()
    const { exitCode, stdout, stderr } = await spawnNode(
      [...(options.nodeArgs ?? []), join(options.dist ?? DIST, 'index.js')],
      env,
      dir,
      options.timeoutMs
    )
    return {
      exitCode,
      stdout,
      stderr,
      outputs: parseOutputFile(readFileSync(outputPath, 'utf8')),
      summary: readFileSync(summaryPath, 'utf8'),
      durationMs: performance.now() - started
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs the project's Node 24 with these arguments; resolves when it exits. */
export function spawnNode(
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string,
  timeoutMs = DEFAULT_TIMEOUT_MS
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(NODE_24, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', chunk => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', chunk => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', exitCode => {
      clearTimeout(timer)
      resolvePromise({ exitCode, stdout, stderr })
    })
  })
}

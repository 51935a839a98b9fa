/**
 * The command line: flags and CHANGE_TRACKING_* variables in, the CI's context detected, then the
 * same step as the action's (src/step.ts), reported to a terminal and the files a CI reads. `run`
 * checks the key, runs the deploy as a child process and records how it ended.
 */
import type { RunDefaults } from '../change.ts'
import { InputError } from '../errors.ts'
import { ACTION_VERSION } from '../package.ts'
import type { CallHints } from '../service/client.ts'
import type { FailureAdvice } from '../service/failures.ts'
import type { Settings } from '../settings.ts'
import {
  AFTER_DEPLOY_BUDGET_MS,
  COMMAND_HANDLERS,
  KEY_CHECK_BUDGET_MS,
  runStep,
  type StepDoor
} from '../step.ts'
import { failureKind } from '../errors.ts'
import { ciMetadata, detectCiContext, type CiContext, type Env } from './ci-context.ts'
import { runDeploy } from './deploy-process.ts'
import { buildProgram, UsageError, type Invocation } from './flags.ts'
import { outputsJson, Terminal, writeFiles } from './terminal.ts'

/** The exit status of a wrong command line or input: wrong on every run, so never retried. */
const USAGE_EXIT = 2
const READ_COMMANDS = new Set(['get-change', 'event-results', 'hello'])

const ADVICE: FailureAdvice = {
  raiseTimeout: 'raise --timeout-seconds',
  checkAddress: 'check --base-url',
  checkApiKey:
    "check the API key (CHANGE_TRACKING_API_KEY or --api-key-file) and the key's permissions"
}
const HINTS: CallHints = {
  getChange: { 404: 'No change has that id: check --change-id.' },
  sendHeartbeat: {
    404: 'No heartbeat monitor has that id: check --heartbeat-id against the monitor page.'
  }
}

/** Runs the command line; resolves with the exit status. */
export async function main(
  argv: readonly string[],
  env: Env,
  io: { stdout: (text: string) => void; stderr: (line: string) => void; cwd: string }
): Promise<number> {
  let invocation: Invocation | undefined
  const output = { writeOut: io.stdout, writeErr: (text: string) => io.stderr(text.trimEnd()) }
  const program = buildProgram(ACTION_VERSION, output, found => (invocation = found))
  try {
    program.parse([...argv], { from: 'user' })
  } catch (error) {
    if (error instanceof UsageError) io.stderr(`error: ${error.message}`)
    const { exitCode } = error as { exitCode?: number }
    // Help and --version exit 0; every other refusal of the command line is a usage error.
    return exitCode === 0 ? 0 : USAGE_EXIT
  }
  if (invocation === undefined) return USAGE_EXIT
  const terminal = new Terminal(io.stderr, invocation.options.debug)
  const door: StepDoor = {
    sink: terminal,
    getInput: invocation.getInput,
    advice: ADVICE,
    hints: HINTS
  }
  const ci = detectCiContext(env, io.cwd)
  // Where each field came from is said once, though `run` reads the settings twice.
  let said = false
  const run = (settings: Settings): RunDefaults => {
    const say = said ? undefined : (line: string) => terminal.debug(line)
    said = true
    return runDefaults(ci, settings, invocation!, io.cwd, say)
  }
  const status =
    invocation.command === 'run'
      ? await runWrapped(door, invocation, run, env)
      : await runCommand(door, invocation, run)
  writeFiles(terminal, invocation.options, problem => terminal.warning(problem))
  if (invocation.options.json) io.stdout(`${outputsJson(terminal.outputs)}\n`)
  return status
}

/** One command, and its exit status: 2 for input, 1 for a failed read or under --fail-on-error true. */
async function runCommand(
  door: StepDoor,
  invocation: Invocation,
  run: (settings: Settings) => RunDefaults
): Promise<number> {
  const { error, reporting } = await runStep(door, {
    run,
    budgetCap: () => Infinity,
    recordsChange: settings => settings.command === 'change',
    act: (context, settings) => COMMAND_HANDLERS[settings.command](context),
    settle: error => namedInput(error, invocation)
  })
  if (error === undefined) return 0
  if (failureKind(error) === 'input') return USAGE_EXIT
  return READ_COMMANDS.has(invocation.command) || reporting.failOnError === 'true' ? 1 : 0
}

/**
 * `run -- CMD`: the key checked within KEY_CHECK_BUDGET_MS, the deploy run, then its change
 * recorded. Exits with the deploy's status; tracking changes it only under --fail-on-error true.
 */
async function runWrapped(
  door: StepDoor,
  invocation: Invocation,
  run: (settings: Settings) => RunDefaults,
  env: Env
): Promise<number> {
  let recording = true
  const check = await runStep(door, {
    run,
    budgetCap: () => KEY_CHECK_BUDGET_MS,
    recordsChange: () => false,
    act: async ({ client, report }) => {
      await client.hello()
      report.info('The change will be recorded when the deploy ends, with how it ended.')
    },
    settle(error, { report, reporting }) {
      const kind = failureKind(error)
      const policy = reporting.failOnError
      if (kind === 'input' || policy === 'true') return namedInput(error, invocation)
      // Tracking never decides whether the deploy runs.
      recording = kind === 'outage'
      report.warning(
        `${(error as Error).message} The deploy goes on${recording ? '; its change will be recorded when it ends' : ', and it will not be recorded'} (fail-on-error: ${policy}).`
      )
      return undefined
    }
  })
  if (check.error !== undefined) return failureKind(check.error) === 'input' ? USAGE_EXIT : 1
  const [command, ...args] = invocation.deploy
  const deploy = await runDeploy(command, args, { env: env as NodeJS.ProcessEnv })
  if (!deploy.started) {
    door.sink.error(deploy.message)
    return deploy.exitCode
  }
  if (!recording) return deploy.exitCode
  const { error, reporting } = await runStep(door, {
    run,
    budgetCap: () => AFTER_DEPLOY_BUDGET_MS,
    recordsChange: () => true,
    act: (context, settings) =>
      COMMAND_HANDLERS[settings.command]({
        ...context,
        deploy: { ...deploy, status: deploy.outcome }
      }),
    settle: error => namedInput(error, invocation)
  })
  const failed = error !== undefined && reporting.failOnError === 'true'
  return failed && deploy.exitCode === 0 ? 1 : deploy.exitCode
}

/** An input error names the flag, or the variable, that its value came from. */
function namedInput(error: unknown, invocation: Invocation): unknown {
  return error instanceof InputError ? error.namedAs(invocation.nameOf(error.input)) : error
}

/**
 * The CI's context as the change's defaults. The version and the service are required: without
 * them a change says nothing of what shipped, so the command stops before any request. With
 * --debug (`say`), where each field came from.
 */
function runDefaults(
  ci: CiContext,
  settings: Settings,
  invocation: Invocation,
  cwd: string,
  say?: (line: string) => void
): RunDefaults {
  const required = settings.command === 'change' && settings.services === undefined
  for (const name of ['version', 'service', 'user', 'environment'] as const) {
    const given = settings.change[name]
    if (
      required &&
      (name === 'version' || name === 'service') &&
      (given ?? ci[name]) === undefined
    ) {
      throw new InputError(
        name,
        ' is unknown: no CI variable or git checkout gives it here; set it.'
      )
    }
    const from = given !== undefined ? invocation.nameOf(name) : ci.sources[name]
    say?.(`${name}: ${given ?? ci[name] ?? '(none)'}${from ? ` (from ${from})` : ''}`)
  }
  const url = ci.jobUrl ?? ci.buildUrl
  return {
    service: ci.service,
    version: ci.version,
    user: ci.user,
    environment: ci.environment,
    branch: ci.branch,
    metadata: { key: 'ci', fields: ciMetadata(ci) },
    runLink: url ? { text: ci.buildNumber ? `Build ${ci.buildNumber}` : 'Build', url } : undefined,
    workspace: cwd
  }
}

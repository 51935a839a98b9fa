/**
 * The command line: flags and CHANGE_TRACKING_* variables in, the CI's context detected, then the
 * same step as the action's (src/step.ts), reported to a terminal and the files a CI reads. `run`
 * checks the key, runs the deploy as a child process and records how it ended.
 */
import { withoutUndefined } from '../change.ts'
import type { DeployRecord } from '../deploy.ts'
import { failureKind, InputError } from '../errors.ts'
import { ACTION_VERSION } from '../package.ts'
import { Inputs } from '../settings.ts'
import {
  AFTER_DEPLOY_BUDGET_MS,
  COMMAND_HANDLERS,
  KEY_CHECK_BUDGET_MS,
  runStep,
  type StepDoor,
  type StepPlan
} from '../step.ts'
import { checkoutLookup, ciDefaults, detectCiContext, type Env } from './ci-context.ts'
import { runDeploy } from './deploy-process.ts'
import { buildProgram, UsageError, type Invocation } from './flags.ts'
import { Terminal, writeFiles } from './terminal.ts'

/** A wrong command line or input: wrong on every run, so never worth a retry. */
const USAGE_EXIT = 2
const READ_COMMANDS = new Set(['get-change', 'event-results', 'hello'])

type Door = StepDoor & Pick<StepPlan, 'run' | 'lookUp'> & { invocation: Invocation }

/** Runs the command line; resolves with the exit status. */
export async function main(
  argv: readonly string[],
  env: Env,
  io: { stdout: (text: string) => void; stderr: (line: string) => void; cwd: string }
): Promise<number> {
  let invocation: Invocation | undefined
  const output = { writeOut: io.stdout, writeErr: (text: string) => io.stderr(text.trimEnd()) }
  try {
    const program = buildProgram(ACTION_VERSION, output, env, found => (invocation = found))
    program.parse([...argv], { from: 'user' })
  } catch (error) {
    if (error instanceof UsageError) io.stderr(`error: ${error.message}`)
    // Help and --version exit 0; every other refusal of the command line is a usage error.
    return (error as { exitCode?: number }).exitCode === 0 ? 0 : USAGE_EXIT
  }
  if (invocation === undefined) return USAGE_EXIT
  const { command, options, nameOf } = invocation
  const terminal = new Terminal(io.stderr, options.debug)
  const ci = detectCiContext(env, io.cwd)
  // Where each field came from is said once, though `run` reads the settings twice.
  let said = false
  const door: Door = {
    sink: terminal,
    getInput: invocation.getInput,
    // prettier-ignore
    advice: { raiseTimeout: 'raise --timeout-seconds', checkAddress: 'check --base-url',
      checkApiKey: 'check the API key (CHANGE_TRACKING_API_KEY or --api-key-file) and its permissions' },
    // prettier-ignore
    hints: { getChange: { 404: 'No change has that id: check --change-id.' },
      sendHeartbeat: { 404: 'No heartbeat monitor has that id: check --heartbeat-id.' } },
    invocation,
    run: settings => {
      // Without a version and a service a change says nothing of what shipped: none is sent.
      const fields = { ...ci, ...withoutUndefined(settings.change) }
      if (settings.command === 'change') {
        if (!fields.version) throw new InputError('version', NOT_DETECTED)
        if (!fields.service && !settings.services) throw new InputError('service', NOT_DETECTED)
      }
      for (const name of said ? [] : (['version', 'service', 'user', 'environment'] as const)) {
        const from = settings.change[name] !== undefined ? nameOf(name) : ci.sources[name]
        terminal.debug(`${name}: ${fields[name] ?? '(none)'} (from ${from ?? 'nowhere'})`)
      }
      said = true
      return ciDefaults(ci, io.cwd)
    },
    lookUp: checkoutLookup(env, ci, io.cwd, nameOf(Inputs.PreviousVersion))
  }
  const status = command === 'run' ? await runWrapped(door, env) : await runCommand(door)
  writeFiles(terminal, options, problem => terminal.warning(problem))
  // The outputs as one JSON object, by the action's output names.
  if (options.json) io.stdout(`${JSON.stringify(Object.fromEntries(terminal.outputs))}\n`)
  return status
}

const NOT_DETECTED = ' is unknown: no CI variable or git checkout gives it here; set it.'

/** One command: 0, 2 for input, 1 for a failed read or any failure under --fail-on-error true. */
async function runCommand(door: Door): Promise<number> {
  const { error, reporting } = await commandStep(door, Infinity)
  if (error === undefined) return 0
  if (failureKind(error) === 'input') return USAGE_EXIT
  return READ_COMMANDS.has(door.invocation.command) || reporting.failOnError === 'true' ? 1 : 0
}

/**
 * `run -- CMD`: the key checked within KEY_CHECK_BUDGET_MS, the deploy run, then its change
 * recorded. Exits with the deploy's status; tracking changes it only under --fail-on-error true.
 */
async function runWrapped(door: Door, env: Env): Promise<number> {
  let recording = true
  const check = await runStep(door, {
    run: door.run,
    budgetCap: () => KEY_CHECK_BUDGET_MS,
    recordsChange: () => false,
    act: async ({ client, report }) => {
      await client.hello()
      report.info('The change will be recorded when the deploy ends, with how it ended.')
    },
    settle(error, { report, reporting: { failOnError } }) {
      const kind = failureKind(error)
      if (kind === 'input' || failOnError === 'true') return namedInput(error, door.invocation)
      // Tracking never decides whether the deploy runs: an outage leaves recording to try after.
      recording = kind === 'outage'
      const after = recording ? '; its change will be recorded when it ends' : ', unrecorded'
      report.warning(
        `${(error as Error).message} The deploy goes on${after} (fail-on-error: ${failOnError}).`
      )
      return undefined
    }
  })
  if (check.error !== undefined) return failureKind(check.error) === 'input' ? USAGE_EXIT : 1
  const [command, ...args] = door.invocation.deploy
  const deploy = await runDeploy(command, args, { env: env as NodeJS.ProcessEnv })
  if (!deploy.started) door.sink.error(deploy.message)
  if (!deploy.started || !recording) return deploy.exitCode
  const record = { ...deploy, status: deploy.outcome }
  const { error, reporting } = await commandStep(door, AFTER_DEPLOY_BUDGET_MS, record)
  const failed = error !== undefined && reporting.failOnError === 'true'
  return failed && deploy.exitCode === 0 ? 1 : deploy.exitCode
}

/** The command, after a wrapped deploy with how it ended; its input errors named as flags are. */
function commandStep(door: Door, budgetCap: number, deploy?: DeployRecord) {
  return runStep(door, {
    run: door.run,
    lookUp: door.lookUp,
    budgetCap: () => budgetCap,
    recordsChange: settings => settings.command === 'change',
    act: (context, settings) => COMMAND_HANDLERS[settings.command]({ ...context, deploy }),
    settle: error => namedInput(error, door.invocation)
  })
}

/** An input error names the flag, or the variable, that its value came from. */
function namedInput(error: unknown, invocation: Invocation): unknown {
  return error instanceof InputError ? error.namedAs(invocation.nameOf(error.input)) : error
}

/**
 * The command line's door: flags and CHANGE_TRACKING_* variables in, the CI's context detected,
 * then the core's steps (src/step.ts), reported to a terminal and the files a CI reads. `run`
 * checks the key, runs the deploy as a child process and records how it ended. Every line it
 * prints, the parser's included, is redacted, made inert and cut on its way out.
 */
import { resolve } from 'node:path'
import type { ShippedLookup } from '../commands/command.ts'
import { requireSubject } from '../commands/change.ts'
import { InputError } from '../errors.ts'
import { ACTION_VERSION } from '../package.ts'
import { CancelledError } from '../policy.ts'
import { Redactor } from '../redact.ts'
import { safeLine, type DoorWords } from '../report.ts'
import { Inputs, type Command, type Env } from '../settings.ts'
import {
  AFTER_DEPLOY_BUDGET_MS,
  finishRun,
  KEY_CHECK_BUDGET_MS,
  momentOf,
  openRun,
  runCommand,
  SIGNAL_EXIT_CODES,
  type OpenRun
} from '../step.ts'
import { checkoutLookup, ciDefaults, detectCiContext } from './ci-context.ts'
import { runDeploy } from './deploy-process.ts'
import { buildProgram, sensitiveValues, variableOf, type Invocation } from './flags.ts'
import { readKeyFile } from './key-file.ts'
import { Terminal, writeFiles } from './terminal.ts'

/** A command line that cannot run: wrong on every run, so never worth a retry. */
const USAGE_EXIT = 2
/** The least a key check is given, whatever reading the key file and the checkout took. */
const MIN_KEY_CHECK_MS = 1000
type Io = {
  stdout: (text: string | Uint8Array) => void
  stderr: (line: string) => void
  cwd: string
}

/** The command line's words: its flags and variables, "the command" and "the deploy". */
const CLI_WORDS: Omit<DoorWords, 'inputName'> = {
  advice: {
    raiseTimeout: 'raise --timeout-seconds',
    checkAddress: 'check --base-url',
    checkApiKey: `check the API key (${variableOf(Inputs.ApiKey)} or --api-key-file) and its permissions`
  },
  hints: {
    getChange: { 404: 'No change has that id: check --change-id.' },
    sendHeartbeat: { 404: 'No heartbeat monitor has that id: check --heartbeat-id.' }
  },
  missingKey: `No API key: set ${variableOf(Inputs.ApiKey)}, or give --api-key-file.`,
  notFailing: {
    outage:
      '(Not counted as a failure: an outage fails the command only under --fail-on-error true.)',
    false: '(Not counted as a failure: --fail-on-error is false.)'
  },
  beforeDeploy: {
    failsNow: 'The deploy was not run (--fail-on-error true).',
    failsAfter:
      'The deploy runs, unrecorded, and the command exits 1 after it; to run it unrecorded without failing, give --fail-on-error false.',
    recordsAfter: 'The deploy runs; its change will be recorded when it ends.',
    unrecorded: 'The deploy runs, unrecorded (--fail-on-error false).'
  },
  outputsAdvice: 'Check the disk.'
}

/** Runs the command line; resolves with the exit status. */
export async function main(argv: readonly string[], env: Env, io: Io): Promise<number> {
  const startedAt = Date.now()
  const redactor = new Redactor()
  for (const secret of sensitiveValues(argv, env)) redactor.add(secret)
  const safe = (text: string, prefix?: string): string => safeLine(redactor, text, { prefix })
  const say = (line: string): void => io.stderr(safe(line))
  let invocation: Invocation | undefined
  try {
    // Help is our own words, printed as lines; a refusal may quote the command line: made safe.
    const output = {
      writeOut: io.stdout,
      writeErr: (text: string) => io.stderr(text.trimEnd()),
      outputError: (text: string) => say(text.trimEnd())
    }
    const program = buildProgram(ACTION_VERSION, output, env, found => (invocation = found), argv)
    program.parse(argv, { from: 'user' })
  } catch (error) {
    // Help and --version exit 0; every other refusal of the command line is a usage error.
    if (!(error as { code?: string }).code?.startsWith('commander.'))
      say(`error: ${String((error as Error).message)}`)
    return (error as { exitCode?: number }).exitCode === 0 ? 0 : USAGE_EXIT
  }
  if (invocation === undefined) return USAGE_EXIT
  const { command, options, nameOf, apiKeyFile } = invocation
  const terminal = new Terminal(io.stderr, safe, options.debug)
  // The key file and the CI's context are read at once, within the key check's ten seconds, and
  // leave the check itself at least its last second: the deploy starts within the ten.
  const [key, ci] = await Promise.all([
    apiKeyFile && readKeyFile(apiKeyFile, { timeoutMs: KEY_CHECK_BUDGET_MS - MIN_KEY_CHECK_MS }),
    detectCiContext(env, io.cwd)
  ])
  if (key && 'key' in key) redactor.add(key.key)
  const getInput = (name: string): string =>
    name === Inputs.ApiKey && key && 'key' in key ? key.key : invocation!.getInput(name)
  for (const warning of ci.warnings ?? []) terminal.warning(warning)
  for (const name of ['version', 'service', 'user', 'environment'] as const) {
    const given = getInput(name)
    const from = given ? nameOf(name) : (ci.sources[name] ?? 'nowhere')
    terminal.debug(`${name}: ${given || (ci[name] ?? '(none)')} (from ${from})`)
  }
  const words = { ...CLI_WORDS, inputName: nameOf }
  const open = await openRun({ sink: terminal, getInput, words, redactor })
  // A key file that cannot be used is a mistake to fix, like a rejected key.
  if (key && 'problem' in key) open.error = new Error(key.problem)
  const lookUp = checkoutLookup(env, ci, io.cwd, nameOf(Inputs.PreviousVersion))
  const run = { ...ciDefaults(ci, io.cwd), cdevent: options.cdevent !== undefined }
  const door = { open, run, lookUp: lookUp(open.settings?.previousVersion) }
  const status =
    command === 'run'
      ? await runWrapped(door, invocation, env, io, KEY_CHECK_BUDGET_MS - (Date.now() - startedAt))
      : await runAlone(door, command)
  const cdevent = options.cdevent && resolve(io.cwd, options.cdevent)
  // A file that cannot be written fails the command only under true; a deploy's status is kept.
  const failsOnFiles = open.reporting.failOnError === 'true'
  const unwritten = writeFiles(terminal, { ...options, cdevent }, failsOnFiles)
  // The outputs as one JSON object: the last line of standard output, whole.
  if (options.json) io.stdout(`${JSON.stringify(Object.fromEntries(terminal.outputs))}\n`)
  return status === 0 && unwritten && failsOnFiles ? 1 : status
}

type DoorRun = { open: OpenRun; run: ReturnType<typeof ciDefaults>; lookUp: ShippedLookup }

/** One command: 0, 2 for an input error, 1 for another failure the policy counts. */
async function runAlone({ open, run, lookUp }: DoorRun, command: Command): Promise<number> {
  const error = await runCommand(open, { run, lookUp, budgetCap: Infinity })
  const verdict = await finishRun(open, error, momentOf(command))
  return !verdict?.failsNow ? 0 : error instanceof InputError ? USAGE_EXIT : 1
}

/**
 * `run -- CMD`: the key checked within what is left of KEY_CHECK_BUDGET_MS, the deploy run, then
 * its change recorded. Exits with the deploy's status when it is not 0; after a successful deploy,
 * with 1 when the policy counts a tracking failure.
 */
async function runWrapped(
  { open, run, lookUp }: DoorRun,
  invocation: Invocation,
  env: Env,
  io: Io,
  budgetLeft: number
): Promise<number> {
  const { settings, report } = open
  const { json } = invocation.options
  const error = await runCommand(open, {
    run,
    budgetCap: Math.max(budgetLeft, MIN_KEY_CHECK_MS),
    act: async ({ client, report, settings }) => {
      requireSubject(settings, run)
      await client.hello()
      report.info('The change will be recorded when the deploy ends, with how it ended.')
    },
    onSignal: 'stop'
  })
  if (error instanceof CancelledError) {
    report.warning(`The deploy was not started: ${error.signal} arrived during the key check.`)
    return SIGNAL_EXIT_CODES[error.signal]
  }
  const before = error === undefined ? undefined : await finishRun(open, error, 'before-deploy')
  if (before?.failsNow) return 1
  const [command, ...args] = invocation.deploy
  const deploy = await runDeploy(command, args, { env, stdout: json ? io.stdout : undefined })
  if (!deploy.started) {
    report.failed(deploy.message)
    return deploy.exitCode
  }
  if (json && !deploy.outputEndsLine) io.stdout('\n')
  let fails = before?.failsAfter ?? false
  if (settings && (!before || before.recordsAfter)) {
    const recorded = await runCommand(open, {
      run,
      lookUp,
      budgetCap: AFTER_DEPLOY_BUDGET_MS,
      deploy: { ...deploy, status: deploy.outcome },
      onSignal: 'stop'
    })
    fails ||= (await finishRun(open, recorded, 'recording'))?.failsNow ?? false
  }
  return deploy.exitCode !== 0 ? deploy.exitCode : fails ? 1 : 0
}

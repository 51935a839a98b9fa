/**
 * The command line's door: flags and CHANGE_TRACKING_* variables in, the key file and the CI's
 * context read, then the core's steps (src/step.ts) in order, reported to a terminal and the
 * files a CI reads. `run` checks the key, runs the deploy as a child process and records how it
 * ended. Every line it prints, the parser's included, is redacted, made inert and cut on its way
 * out. Signals and the exit status are this door's.
 */
import { resolve } from 'node:path'
import { ACTION_VERSION } from '../package.ts'
import {
  CancelledError,
  exitStatus,
  rule,
  SIGNAL_EXIT_CODES,
  UnreportedError,
  type Ruling
} from '../policy.ts'
import { Redactor } from '../redact.ts'
import { safeLine, type DoorWords } from '../report.ts'
import { Inputs, Outputs, type Env } from '../settings.ts'
import {
  AFTER_DEPLOY_BUDGET_MS,
  CANCEL_GRACE_MS,
  checkKey,
  finishRun,
  KEY_CHECK_BUDGET_MS,
  momentOf,
  openRun,
  runCommand,
  type OpenRun,
  type Stopping
} from '../step.ts'
import { readSecretFile } from '../values/secret-file.ts'
import { checkoutSource, ciDefaults, detectCiContext } from './ci-context.ts'
import { runDeploy } from './deploy-process.ts'
import { parseCommandLine, sensitiveValues, variableOf, type Invocation } from './flags.ts'
import { changeLines, outputsJson, Terminal, writeFiles } from './terminal.ts'

/** A command line that cannot run: wrong on every run, so never worth a retry. */
const USAGE_EXIT = 2
/** The least a key check is given, whatever reading the key file and the checkout took. */
const MIN_KEY_CHECK_MS = 1000
/** After a signal that stops every call, the process ends within this, whatever is left. */
const CANCEL_EXIT_MS = 800
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
type Io = {
  stdout: (text: string | Uint8Array) => void
  stderr: (line: string) => void
  cwd: string
}

/** The command line's words: its flags and variables, "the command" and "the deploy". */
const CLI_WORDS: Omit<DoorWords, 'inputNames'> = {
  advice: {
    changeWait:
      'lower --timeout-seconds or --max-attempts to wait less for it, or raise --timeout-seconds if it is only slow',
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
    unreported:
      '(Not counted as a failure: what could not be reported fails the command only under --fail-on-error true.)',
    false: '(Not counted as a failure: --fail-on-error is false.)'
  },
  beforeDeploy: {
    failsNow: 'The deploy was not run (--fail-on-error true).',
    failsAfterDeploy:
      'The deploy runs, unrecorded, and the command exits 1 after it; to run it unrecorded without failing, give --fail-on-error false.',
    recordsAfterDeploy: 'The deploy runs; its change will be recorded when it ends.',
    warns: 'The deploy runs, unrecorded (--fail-on-error false).'
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
      // Each line of a refusal on its own: "(Did you mean --environment?)" follows it.
      outputError: (text: string) => {
        for (const line of text.trimEnd().split('\n')) say(line)
      }
    }
    invocation = parseCommandLine(argv, env, output, ACTION_VERSION)
  } catch (error) {
    // Help and --version exit 0; every other refusal of the command line is a usage error.
    if (!(error as { code?: string }).code?.startsWith('commander.'))
      say(`error: ${String((error as Error).message)}`)
    return (error as { exitCode?: number }).exitCode === 0 ? 0 : USAGE_EXIT
  }
  if (invocation === undefined) return USAGE_EXIT
  const { command, options, apiKeyFile } = invocation
  const terminal = new Terminal(io.stderr, safe, options.debug)
  // Before the run is opened, a signal stops what reads the key file and the checkout.
  const opening = stopOnSignals({ graceful: false })
  // The key file and the CI's context are read at once, within the key check's ten seconds, and
  // leave the check itself at least its last second: the deploy starts within the ten.
  const [key, ci] = await Promise.all([
    apiKeyFile &&
      readSecretFile(apiKeyFile, {
        name: '--api-key-file',
        timeoutMs: KEY_CHECK_BUDGET_MS - MIN_KEY_CHECK_MS,
        signal: opening.cancel
      }),
    detectCiContext(env, io.cwd, {
      signal: opening.cancel,
      givenService: invocation.inputs[Inputs.Service]
    })
  ])
  opening.dispose()
  const signal = opening.cancel.reason as NodeJS.Signals | undefined
  if (signal) {
    terminal.warning(`Nothing was run or recorded: ${signal} arrived before the run began.`)
    return SIGNAL_EXIT_CODES[signal]
  }
  if (key && 'secret' in key) redactor.add(key.secret)
  const inputs: Record<string, string> = { ...invocation.inputs }
  if (key && 'secret' in key) inputs[Inputs.ApiKey] = key.secret
  for (const warning of ci.warnings ?? []) terminal.warning(warning)
  for (const name of ['version', 'service', 'user', 'environment'] as const) {
    const given = inputs[name]
    const from = given ? invocation.inputNames[name] : (ci.sources[name] ?? 'nowhere')
    terminal.debug(`${name}: ${given || (ci[name] ?? '(none)')} (from ${from})`)
  }
  const words = { ...CLI_WORDS, inputNames: invocation.inputNames }
  // A key file that cannot be used is a mistake to fix, like a rejected key.
  const problem = key && 'problem' in key ? key.problem : undefined
  const open = await openRun({ renderer: terminal, inputs, words, redactor, problem })
  const run = { ...ciDefaults(ci, io.cwd), cdevent: options.cdevent !== undefined }
  const lookup = checkoutSource(env, ci, io.cwd, {
    named: invocation.inputNames[Inputs.PreviousVersion],
    previousVersion: open.settings?.previousVersion
  })
  const door = { open, run, lookup }
  const ended =
    command === 'run'
      ? await runWrapped(door, invocation, env, io, KEY_CHECK_BUDGET_MS - (Date.now() - startedAt))
      : await runAlone(door)
  const cdevent = options.cdevent && resolve(io.cwd, options.cdevent)
  // A file that cannot be written is judged as any failure to report.
  const unwritten = rule(new UnreportedError(), 'recording', open.reporting.failOnError)
  const written = writeFiles(terminal, { ...options, cdevent }, unwritten.verdict === 'failsNow')
  // The outputs as one JSON object: the last line of standard output, whole.
  if (options.json) io.stdout(`${outputsJson(terminal.outputs)}\n`)
  else if (command === 'get-change' && terminal.outputs.has(Outputs.Change)) {
    for (const line of changeLines(terminal.outputs.get(Outputs.Change) ?? ''))
      io.stdout(`${safe(line)}\n`)
  }
  const rulings = [...ended.rulings, ...(written ? [] : [unwritten])]
  return exitStatus('cli', rulings, ended.deployExit)
}

type DoorRun = {
  open: OpenRun
  run: ReturnType<typeof ciDefaults>
  lookup: ReturnType<typeof checkoutSource>
}
type Ended = { rulings: Ruling[]; deployExit?: number }

/** One command, stopped by a signal as the action's steps are (a SIGINT lets a change be sent). */
async function runAlone({ open, run, lookup }: DoorRun): Promise<Ended> {
  const stopping = stopOnSignals({ graceful: true })
  const outcome = await runCommand(open, { run, lookup, budgetCap: Infinity, ...stopping })
  stopping.dispose()
  return { rulings: await finishRun(open, outcome, momentOf(open.reporting.command)) }
}

/**
 * `run -- CMD`: the key checked within what is left of KEY_CHECK_BUDGET_MS, the deploy run, then
 * its change recorded. A signal stops the check or the recording at once; while the deploy runs,
 * signals are the deploy's.
 */
async function runWrapped(
  { open, run, lookup }: DoorRun,
  invocation: Invocation,
  env: Env,
  io: Io,
  budgetLeft: number
): Promise<Ended> {
  const { report } = open
  const { json } = invocation.options
  const checking = stopOnSignals({ graceful: false })
  const budgetCap = Math.max(budgetLeft, MIN_KEY_CHECK_MS)
  const checked = await checkKey(open, { run, budgetCap, ...checking })
  checking.dispose()
  if (checked.error instanceof CancelledError) {
    const ruling = rule(checked.error, 'before-deploy', open.reporting.failOnError)
    const line = `The deploy was not started: ${checked.error.signal} arrived during the key check.`
    if (ruling.verdict === 'failsNow') report.failed(line)
    else report.warning(line)
    return { rulings: [ruling] }
  }
  if (checked.error === undefined)
    report.info('The change will be recorded when the deploy ends, with how it ended.')
  const before = checked.error === undefined ? [] : await finishRun(open, checked, 'before-deploy')
  if (before.some(ruling => ruling.verdict === 'failsNow')) return { rulings: before }
  const [command, ...args] = invocation.deploy
  const deploy = await runDeploy(command, args, { env, stdout: json ? io.stdout : undefined })
  if (!deploy.started) {
    report.failed(`${deploy.message} Nothing was recorded: the deploy did not start.`)
    return { rulings: before, deployExit: deploy.exitCode }
  }
  if (json && !deploy.outputEndsLine) io.stdout('\n')
  const recordsAfter = before.every(ruling => ruling.verdict === 'recordsAfterDeploy')
  if (!open.settings || !recordsAfter) {
    // The reason the command fails is its last line, after all of the deploy's output.
    if (before.some(ruling => ruling.verdict === 'failsAfterDeploy'))
      report.failed(
        `The deploy ran, unrecorded: ${report.messageOf(checked.error)} To run it unrecorded without failing, give --fail-on-error false.`
      )
    return { rulings: before, deployExit: deploy.exitCode }
  }
  const recording = stopOnSignals({ graceful: false })
  const outcome = await runCommand(open, {
    run,
    lookup,
    budgetCap: AFTER_DEPLOY_BUDGET_MS,
    deploy: { ...deploy, status: deploy.outcome },
    ...recording
  })
  recording.dispose()
  const rulings = await finishRun(open, outcome, 'recording')
  return { rulings: [...before, ...rulings], deployExit: deploy.exitCode }
}

/**
 * What a signal means to a step: it cancels it; `graceful`, a first SIGINT lets a change in flight
 * be sent within CANCEL_GRACE_MS, and any other signal halts every call at once. The process then
 * ends within CANCEL_EXIT_MS, whatever is left, with 128 plus the signal's number.
 */
function stopOnSignals({ graceful }: { graceful: boolean }): Required<Stopping> & {
  dispose: () => void
} {
  const cancel = new AbortController()
  const halt = new AbortController()
  // The last resort, should the step not end: once it has, dispose() clears it.
  const timers: NodeJS.Timeout[] = []
  const exitLater = (signal: NodeJS.Signals, ms: number): void => {
    timers.push(setTimeout(() => process.exit(SIGNAL_EXIT_CODES[signal]), ms).unref())
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    const first = !cancel.signal.aborted
    cancel.abort(signal)
    if (graceful && first && signal === 'SIGINT')
      return exitLater(signal, CANCEL_GRACE_MS + CANCEL_EXIT_MS)
    halt.abort(signal)
    exitLater(signal, CANCEL_EXIT_MS)
  }
  for (const signal of SIGNALS) process.on(signal, onSignal)
  const dispose = () => {
    for (const signal of SIGNALS) process.off(signal, onSignal)
    for (const timer of timers) clearTimeout(timer)
  }
  return { cancel: cancel.signal, halt: halt.signal, dispose }
}

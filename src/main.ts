/**
 * The action's door: the runner's inputs and the run's context, then one command against the
 * service (or a dry run of it), then the report, through the core's steps (src/step.ts), in
 * order. With `record-at: job-end` the main step only checks the key and saves its start, and the
 * post step records how the deploy ended. Signals and the exit status are this door's.
 */
import { contextDefaults, deploymentEnvironment, stringAt } from './action/defaults.ts'
import { readJobEnvironment } from './action/job-environment.ts'
import {
  checkedStart,
  IS_POST_STATE,
  JOB_END_STATE,
  jobEndStateText,
  type JobEndState
} from './action/post-state.ts'
import { readRunContext, type RunContext } from './action/run-context.ts'
import { githubRunner, type Runner } from './action/runner.ts'
import { InputError } from './errors.ts'
import { ACTION_NAME } from './package.ts'
import { exitStatus, SIGNAL_EXIT_CODES, type Ruling } from './policy.ts'
import type { DoorWords, StepOutcome } from './report.ts'
import { Inputs, type Env, type Settings } from './settings.ts'
import type { LookupSource } from './shipped/lookup-source.ts'
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
} from './step.ts'
import { readSecrets } from './values/read-settings.ts'

/** After a halt (a SIGTERM, a SIGHUP, or a signal after the first), the step ends within this. */
const CANCEL_EXIT_MS = 800

/** The action's words: its inputs by name, and "the step" that fails or does not. */
export const ACTION_WORDS: DoorWords = {
  inputNames: Object.fromEntries(Object.values(Inputs).map(name => [name, `Input "${name}"`])),
  advice: {
    changeWait: `lower the ${Inputs.TimeoutSeconds} or ${Inputs.MaxAttempts} input to wait less for it, or raise ${Inputs.TimeoutSeconds} if it is only slow`,
    checkAddress: `check the ${Inputs.BaseUrl} input`,
    checkApiKey: `check the ${Inputs.ApiKey} input and the key's permissions`
  },
  hints: {
    getChange: { 404: `No change has that id: check the ${Inputs.ChangeId} input.` },
    sendHeartbeat: {
      404: `No heartbeat monitor has that id: check the ${Inputs.HeartbeatId} input against the monitor page.`
    }
  },
  missingKey: `Input "${Inputs.ApiKey}" is required: pass the service's API key from a secret, for example \${{ secrets.CHANGE_TRACKING_API_KEY }}.`,
  notFailing: {
    outage: '(Not failing the step: a service outage does not fail the step.)',
    unreported: '(Not failing the step: what could not be reported does not fail the step.)',
    false: '(Not failing the step: fail-on-error is false.)'
  },
  beforeDeploy: {
    failsNow: 'The step fails, before the deploy (fail-on-error: true).',
    failsAfterDeploy:
      'The deploy goes on, and the job will fail when it ends (fail-on-error: auto).',
    recordsAfterDeploy:
      'The deploy goes on: the post step will still try to record when the job ends.',
    warns: 'The deploy goes on, and it will not be recorded (fail-on-error: false).'
  },
  outputsAdvice: "Check the runner's disk and its GITHUB_OUTPUT file."
}

/** What the main step of a job-end run says once the key is checked. */
const JOB_END_WORDS = {
  change: 'The change will be recorded when the job ends, with how the deploy ended',
  heartbeat: 'The heartbeat will be sent when the job ends, if it succeeds'
}

/** The main step: inputs, the run's context, then the change (or, at job-end, the key check). */
export async function run(runner: Runner = githubRunner, env: Env = process.env): Promise<void> {
  // First, so that the post step knows it is one whatever happens here.
  runner.saveState(IS_POST_STATE, 'true')
  const startedAt = Date.now()
  const open = await openDoor(runner)
  const jobEnd = open.reporting.recordAt === 'job-end'
  const stopping = stopOnSignals()
  let outcome: StepOutcome = { error: open.error }
  let environment: string | undefined
  if (open.settings) {
    const { context, warning } = readRunContext(env)
    if (warning) open.report.warning(warning)
    environment = await jobEnvironmentFor(open.settings, context, env, runner, open)
    const defaults = contextDefaults({ ...context, jobEnvironment: environment }, process.cwd())
    // A CDEvent only here: at the job's end no later step could read an output.
    const plan = { run: { ...defaults, cdevent: true }, ...stopping }
    outcome = jobEnd
      ? await checkKey(open, { ...plan, budgetCap: KEY_CHECK_BUDGET_MS })
      : await runCommand(open, {
          ...plan,
          budgetCap: Infinity,
          lookup: lookupSource(open.settings, context, env)
        })
    if (jobEnd && outcome.error === undefined) {
      const command = open.settings.command === 'heartbeat' ? 'heartbeat' : 'change'
      open.report.info(`${JOB_END_WORDS[command]} (${Inputs.RecordAt}: job-end).`)
    }
  }
  const moment = jobEnd ? 'before-deploy' : momentOf(open.reporting.command)
  const rulings = await finishRun(open, outcome, moment)
  stopping.dispose()
  // Unless it fails now, the post step records after the deploy, or says why it cannot.
  if (jobEnd && !failsNow(rulings)) {
    runner.saveState(JOB_END_STATE, jobEndStateText(startedAt, environment))
  }
  process.exitCode = exitStatus('action', rulings)
}

/** The post step of a `record-at: job-end` run: how the deploy ended, recorded. */
export async function runPost(
  jobEnd: JobEndState,
  runner: Runner = githubRunner,
  env: Env = process.env
): Promise<void> {
  const finishedAt = Date.now()
  const open = await openDoor(runner)
  const { settings, report } = open
  const stopping = stopOnSignals()
  // At the job's end an invalid input leaves the deploy unrecorded: say so, with the cause.
  let outcome: StepOutcome = { error: unrecorded(open.error) }
  if (settings) {
    const { context, warning } = readRunContext(env)
    if (warning) report.warning(warning)
    const start = checkedStart(jobEnd, finishedAt)
    if (start.problem) {
      report.warning(`The deploy is recorded without its start or duration: ${start.problem}.`)
    }
    outcome = await runCommand(open, {
      run: contextDefaults({ ...context, jobEnvironment: jobEnd.environment }, process.cwd()),
      lookup: lookupSource(settings, context, env),
      budgetCap: AFTER_DEPLOY_BUDGET_MS,
      deploy: { ...settings.jobStatus, startedAt: start.startedAt, finishedAt },
      ...stopping
    })
  }
  const rulings = await finishRun(open, outcome, 'recording')
  stopping.dispose()
  process.exitCode = exitStatus('action', rulings)
}

/** Every input as the runner passes it, its secrets masked first; then the run opened. */
async function openDoor(runner: Runner): Promise<OpenRun> {
  const inputs = Object.fromEntries(
    Object.values(Inputs).map(name => [name, runner.getInput(name)])
  )
  for (const secret of readSecrets(name => inputs[name] ?? '')) runner.setSecret(secret)
  return openRun({ renderer: runner, inputs, words: ACTION_WORDS })
}

/** Whether a ruling stops the run where it is (a failure to report aside). */
function failsNow(rulings: readonly Ruling[]): boolean {
  return rulings.some(ruling => ruling.verdict === 'failsNow' && ruling.trouble !== 'unreported')
}

function unrecorded(error: unknown): unknown {
  if (!(error instanceof InputError)) return error
  const saying = (named: string) => `The deploy was not recorded: ${error.saying(named)}`
  return Object.assign(new InputError(error.input, saying), { missing: error.missing })
}

/**
 * What a signal means to a step: the first cancels it (a SIGINT lets a change in flight be sent
 * within CANCEL_GRACE_MS); a SIGTERM, a SIGHUP or a second signal halts every call, and the step
 * then ends within CANCEL_EXIT_MS, whatever is left, with 128 plus the signal's number.
 */
function stopOnSignals(): Required<Stopping> & { dispose: () => void } {
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
    if (first && signal === 'SIGINT') return exitLater(signal, CANCEL_GRACE_MS + CANCEL_EXIT_MS)
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
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']

/**
 * What shipped: from the runner's checkout (`include-commits: git`), with the previous-version
 * input, the tag the run is for and a push's `before`; or through the run's GitHub API.
 */
function lookupSource(settings: Settings, run: RunContext, env: Env): LookupSource | undefined {
  const { previousVersion } = settings
  if (settings.commitsFrom === 'git') {
    const options = {
      cwd: run.workspace ?? process.cwd(),
      env,
      previousVersion,
      tag: run.refType === 'tag' ? run.refName : undefined,
      previousPush: run.eventName === 'push' ? stringAt(run.payload, 'before') : undefined,
      server: { kind: 'github' as const, url: run.serverUrl },
      ci: 'github',
      advice: { previousVersion: `the ${Inputs.PreviousVersion} input` }
    }
    return { from: 'git', options }
  }
  if (!run.repository) return undefined
  const options = {
    ...run,
    repository: run.repository,
    token: settings.githubToken,
    previousVersion,
    advice: { tokenInput: Inputs.GithubToken }
  }
  return { from: 'github', options }
}

/**
 * The job's environment, from its OIDC token, when a change would have none otherwise (no
 * environment input, no deployment event) and the job may ask for a token (`id-token: write`).
 */
async function jobEnvironmentFor(
  settings: Settings,
  context: RunContext,
  env: Env,
  runner: Runner,
  { redactor, report }: OpenRun
): Promise<string | undefined> {
  if (settings.command !== 'change' || settings.change.environment !== undefined) return undefined
  if (deploymentEnvironment(context.eventName, context.payload) !== undefined) return undefined
  const url = env['ACTIONS_ID_TOKEN_REQUEST_URL']
  const requestToken = env['ACTIONS_ID_TOKEN_REQUEST_TOKEN']
  if (!url || !requestToken) return undefined
  const found = await readJobEnvironment(runner, redactor, { url, requestToken }, ACTION_NAME)
  if ('problem' in found) {
    report.debug(`No environment from the job's OIDC token: ${found.problem}`)
    return undefined
  }
  report.info(
    `Environment "${found.environment}" from the job's OIDC token (its environment claim).`
  )
  return found.environment
}

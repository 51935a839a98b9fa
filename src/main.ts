/**
 * The action's door: the runner's inputs and the run's context, then one command against the
 * service (or a dry run of it), then the report, through the core's steps (src/step.ts). With
 * `record-at: job-end` the main step only checks the key and saves its start, and the post step
 * records how the deploy ended.
 */
import { contextDefaults, deploymentEnvironment, stringAt } from './action/defaults.ts'
import { prepareJobEnd } from './action/job-end.ts'
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
import type { ShippedLookup } from './commands/command.ts'
import { InputError } from './errors.ts'
import { ACTION_NAME } from './package.ts'
import type { DoorWords } from './report.ts'
import { Inputs, type Command, type Env, type Settings } from './settings.ts'
import {
  AFTER_DEPLOY_BUDGET_MS,
  finishRun,
  KEY_CHECK_BUDGET_MS,
  momentOf,
  openRun,
  runCommand,
  type Door,
  type OpenRun
} from './step.ts'

/** The action's words: its inputs by name, and "the step" that fails or does not. */
export const ACTION_WORDS: DoorWords = {
  inputName: name => `Input "${name}"`,
  advice: {
    raiseTimeout: `raise the ${Inputs.TimeoutSeconds} input`,
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
    false: '(Not failing the step: fail-on-error is false.)'
  },
  beforeDeploy: {
    failsNow: 'The step fails, before the deploy (fail-on-error: true).',
    failsAfter: 'The deploy goes on, and the job will fail when it ends (fail-on-error: auto).',
    recordsAfter: 'The deploy goes on: the post step will still try to record when the job ends.',
    unrecorded: 'The deploy goes on, and it will not be recorded (fail-on-error: false).'
  },
  outputsAdvice: "Check the runner's disk and its GITHUB_OUTPUT file."
}

const doorOf = (runner: Runner): Door => ({
  sink: runner,
  getInput: name => runner.getInput(name),
  mask: secret => runner.setSecret(secret),
  words: ACTION_WORDS
})

/** The main step: inputs, the run's context, then the change (or, at job-end, the key check). */
export async function run(runner: Runner = githubRunner, env: Env = process.env): Promise<void> {
  // First, so that the post step knows it is one whatever happens here.
  runner.saveState(IS_POST_STATE, 'true')
  const startedAt = Date.now()
  const open = await openRun(doorOf(runner))
  const jobEnd = open.reporting.recordAt === 'job-end'
  const { settings } = open
  let environment: string | undefined
  let error = open.error
  if (settings) {
    const { context, warning } = readRunContext(env)
    if (warning) open.report.warning(warning)
    environment = await jobEnvironmentFor(settings, context, env, runner, open)
    const defaults = contextDefaults({ ...context, jobEnvironment: environment }, process.cwd())
    error = await runCommand(open, {
      // A CDEvent only here: at the job's end no later step could read an output.
      run: { ...defaults, cdevent: true },
      lookUp: lookUpFor(settings, context, env),
      budgetCap: jobEnd ? KEY_CHECK_BUDGET_MS : Infinity,
      act: jobEnd ? prepareJobEnd : undefined
    })
  }
  const command = settings?.command ?? (runner.getInput(Inputs.Command) as Command)
  const verdict = await finishRun(open, error, jobEnd ? 'before-deploy' : momentOf(command))
  // Unless it fails now, the post step records after the deploy, or says why it cannot.
  if (jobEnd && !verdict?.failsNow) {
    runner.saveState(JOB_END_STATE, jobEndStateText(startedAt, environment))
  }
}

/** The post step of a `record-at: job-end` run: how the deploy ended, recorded. */
export async function runPost(
  jobEnd: JobEndState,
  runner: Runner = githubRunner,
  env: Env = process.env
): Promise<void> {
  const finishedAt = Date.now()
  const open = await openRun(doorOf(runner))
  const { settings, report } = open
  // At the job's end an invalid input leaves the deploy unrecorded: say so, with the cause.
  let error = notRecorded(open.error)
  if (settings) {
    const { context, warning } = readRunContext(env)
    if (warning) report.warning(warning)
    const start = checkedStart(jobEnd, finishedAt)
    if (start.problem) {
      report.warning(`The deploy is recorded without its start or duration: ${start.problem}.`)
    }
    error = await runCommand(open, {
      run: contextDefaults({ ...context, jobEnvironment: jobEnd.environment }, process.cwd()),
      lookUp: lookUpFor(settings, context, env),
      budgetCap: AFTER_DEPLOY_BUDGET_MS,
      deploy: { ...settings.jobStatus, startedAt: start.startedAt, finishedAt }
    })
  }
  await finishRun(open, error, 'recording')
}

function notRecorded(error: unknown): unknown {
  if (!(error instanceof InputError)) return error
  const saying = (named: string) => `The deploy was not recorded: ${error.saying(named)}`
  return Object.assign(new InputError(error.input, saying), { missing: error.missing })
}

/**
 * What shipped: from the runner's checkout (`include-commits: git`), with the previous-version
 * input, the tag the run is for and a push's `before`; or through the run's GitHub API. Either
 * lookup is loaded only for a lookup.
 */
function lookUpFor(settings: Settings, run: RunContext, env: Env): ShippedLookup {
  const { previousVersion } = settings
  return async ({ version, environment }, signal) => {
    if (settings.commitsFrom === 'git') {
      const { fullHistoryAdvice, lookUpInCheckout } = await import('./shipped/git-lookup.ts')
      const { gitEnvironment } = await import('./shipped/git.ts')
      return lookUpInCheckout({
        cwd: run.workspace ?? process.cwd(),
        env: gitEnvironment(env),
        version,
        previousVersion,
        tag: run.refType === 'tag' ? run.refName : undefined,
        previousPush: run.eventName === 'push' ? stringAt(run.payload, 'before') : undefined,
        server: { kind: 'github', url: run.serverUrl },
        advice: {
          previousVersion: `the ${Inputs.PreviousVersion} input`,
          fullHistory: fullHistoryAdvice('github')
        },
        signal
      })
    }
    if (!run.repository) return {}
    const { lookUpShipped } = await import('./shipped/lookup.ts')
    return lookUpShipped({
      ...run,
      repository: run.repository,
      token: settings.githubToken,
      version,
      previousVersion,
      environment,
      advice: { tokenInput: Inputs.GithubToken },
      signal
    })
  }
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

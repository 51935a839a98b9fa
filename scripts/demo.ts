/**
 * npm run demo: try the action in one command, with no account. It starts the service emulator
 * and a fake GitHub API holding a few commits and merged pull requests, runs the bundled action as
 * the runner would on a push to main, and shows what happened: the outputs, the job summary (with
 * what the change ships, when the action looks it up), and the change read back by the action,
 * with the labels the action adds (risk:, issue:, remediation: for the revert it ships). Then the
 * command line, dist/cli.js, in a GitLab CI job: `change-tracking run` wraps a deploy that fails,
 * keeps its exit status, and the failed change it recorded is read back with `get-change`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Emulator } from '../emulator/emulator.ts'
import { FakeGitHub } from '../emulator/github.ts'
import { sampleRepository } from '../emulator/github-sample.ts'
import { testCertificate } from '../emulator/tls.ts'
import {
  DIST,
  gitlabJob,
  runBundledAction,
  spawnNode,
  type ActionRun
} from './run-bundled-action.ts'

/** The demo's GitHub token: the fake API accepts only it, and the action must never print it. */
const DEMO_TOKEN = 'ghs_demo0000000000000000000000000000000'
/** The command line's bundle, which `npm run bundle` builds beside the action's. */
const CLI = join(DIST, 'cli.js')

function heading(text: string): void {
  console.log(`\n\x1b[1m== ${text}\x1b[0m`)
}

/** Prints each line of a process's text, indented. */
function indented(text: string): void {
  for (const line of text.trimEnd().split('\n')) if (line) console.log(`  ${line}`)
}

function show(run: ActionRun): void {
  console.log(`exit code: ${run.exitCode} (${run.durationMs.toFixed(0)} ms)`)
  console.log('log:')
  for (const line of run.stdout.trimEnd().split('\n')) {
    if (!line.startsWith('::add-mask::')) console.log(`  ${line}`)
  }
  if (run.stderr) console.log(`stderr:\n${run.stderr}`)
  console.log('outputs:')
  for (const [name, value] of Object.entries(run.outputs)) console.log(`  ${name} = ${value}`)
}

if (!existsSync(CLI)) throw new Error(`${CLI} does not exist: build it with npm run bundle`)
const certificate = await testCertificate()
const sample = sampleRepository()
const emulator = await Emulator.start({ cert: certificate })
const github = await FakeGitHub.start({
  repository: sample.repository,
  token: DEMO_TOKEN,
  cert: certificate
})
emulator.addHeartbeatMonitor('demo-monitor')
// The command line's job folder, here with no checkout: what shipped is not looked up.
const jobFolder = mkdtempSync(join(tmpdir(), 'cta-demo-'))
try {
  const inputs = { 'api-key': emulator.apiKey, 'base-url': emulator.url }
  const gitHubContext = {
    GITHUB_API_URL: github.url,
    GITHUB_REPOSITORY: sample.repository.fullName,
    GITHUB_SHA: sample.head,
    GITHUB_RUN_ID: sample.runId
  }
  console.log(`Emulator listening at ${emulator.url} (a local stand-in for the service).`)
  console.log(`Fake GitHub API at ${github.url} (${sample.repository.commits.length} commits).`)

  heading('1. Record the deploy (push to main) and ping the heartbeat monitor')
  const recorded = await runBundledAction({
    inputs: {
      ...inputs,
      'heartbeat-id': 'demo-monitor',
      labels: 'deploy, web',
      'github-token': DEMO_TOKEN
    },
    eventName: 'push',
    payload: sample.pushPayload,
    env: gitHubContext,
    caCertPath: certificate.certPath
  })
  show(recorded)
  heading('Job summary')
  console.log(recorded.summary.trim())
  const calls = github.requests.map(r => `  ${r.method} ${r.path}`)
  console.log(`\nGitHub API calls: ${calls.length}${calls.length ? `\n${calls.join('\n')}` : ''}`)
  // The runner's own masking command names the token: it is the one line that may.
  const printed = recorded.stdout
    .split('\n')
    .filter(line => !line.startsWith('::add-mask::'))
    .concat(recorded.stderr, recorded.summary)
  if (printed.join('\n').includes(DEMO_TOKEN)) {
    console.log('The GitHub token was printed: that is a bug.')
    process.exitCode = 1
  }

  heading('2. Read the change back (command: get-change)')
  const read = await runBundledAction({
    inputs: { ...inputs, command: 'get-change', 'change-id': recorded.outputs['change-id'] ?? '' },
    env: gitHubContext,
    caCertPath: certificate.certPath
  })
  show(read)
  heading('The change as the emulator stored it')
  const change = JSON.parse(read.outputs['change'] ?? '{}') as Record<string, unknown>
  console.log(
    JSON.stringify(
      { ...change, custom_metadata: JSON.parse(String(change['custom_metadata'] ?? '{}')) },
      null,
      2
    )
  )

  heading('3. record-at: job-end, and the deploy between the two steps fails')
  const jobEndInputs = { ...inputs, 'record-at': 'job-end', 'github-token': DEMO_TOKEN }
  const before = await runBundledAction({
    inputs: jobEndInputs,
    eventName: 'push',
    payload: sample.pushPayload,
    env: gitHubContext,
    caCertPath: certificate.certPath
  })
  console.log('The step before the deploy (main):')
  show(before)
  console.log('\n  ./deploy.sh production   -> exits 1: the job fails\n')
  const after = await runBundledAction({
    inputs: { ...jobEndInputs, 'job-status': 'failure' },
    eventName: 'push',
    payload: sample.pushPayload,
    env: gitHubContext,
    caCertPath: certificate.certPath,
    state: before.state
  })
  console.log('The post step, after the failed deploy:')
  show(after)
  const failed = emulator.changes.get(after.outputs['change-id'] ?? '')
  heading('The failed deploy as the emulator stored it')
  console.log(
    JSON.stringify(
      {
        description: failed?.description,
        created_at: failed?.created_at,
        labels: failed?.labels,
        deploy: (JSON.parse(String(failed?.custom_metadata ?? '{}')) as { deploy?: unknown }).deploy
      },
      null,
      2
    )
  )
  if ([recorded, read, before, after].some(run => run.exitCode !== 0)) process.exitCode = 1

  heading("4. The command line in a GitLab CI job: change-tracking run -- sh -c 'exit 1'")
  console.log("The job's variables (the API key is in CHANGE_TRACKING_API_KEY):")
  for (const [name, value] of Object.entries(gitlabJob())) console.log(`  ${name}=${value}`)
  // The CI's variables and the service's: nothing of this process's environment but PATH.
  const cliEnv = {
    PATH: process.env['PATH'],
    ...gitlabJob(),
    CHANGE_TRACKING_API_KEY: emulator.apiKey,
    CHANGE_TRACKING_BASE_URL: emulator.url,
    NODE_EXTRA_CA_CERTS: certificate.certPath
  }
  const changeTracking = (args: string[]) => spawnNode([CLI, ...args], cliEnv, jobFolder)
  const known = new Set(emulator.changes.keys())
  console.log("\n$ change-tracking run -- sh -c 'exit 1'")
  const wrapped = await changeTracking(['run', '--', 'sh', '-c', 'exit 1'])
  indented(wrapped.stdout + wrapped.stderr)
  console.log(`exit status: ${wrapped.exitCode} (the deploy's own)`)
  const changeId = [...emulator.changes.keys()].find(id => !known.has(id)) ?? ''
  console.log(`\n$ change-tracking get-change --change-id ${changeId} --json`)
  const readBack = await changeTracking(['get-change', '--change-id', changeId, '--json'])
  indented(readBack.stderr)
  const stored = JSON.parse(
    (JSON.parse(readBack.stdout || '{}') as { change?: string }).change ?? '{}'
  ) as Record<string, unknown>
  const metadata = JSON.parse(String(stored['custom_metadata'] ?? '{}')) as Record<string, unknown>
  heading('The failed deploy, as get-change read it back')
  const { description, service, version, user, environment, labels } = stored
  console.log(
    JSON.stringify(
      { description, service, version, user, environment, labels, ...metadata },
      null,
      2
    )
  )
  if (wrapped.exitCode !== 1 || readBack.exitCode !== 0 || labels !== 'outcome:failure') {
    process.exitCode = 1
  }
} finally {
  await Promise.all([emulator.close(), github.close()])
  rmSync(jobFolder, { recursive: true, force: true })
}

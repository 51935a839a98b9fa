/**
 * npm run demo: try the action in one command, with no account. It starts the service emulator
 * and a fake GitHub API holding a few commits and merged pull requests, runs the bundled action as
 * the runner would on a push to main, and shows what happened: the outputs, the job summary (with
 * what the change ships, when the action looks it up), and the change read back by the action,
 * with the labels the action adds (risk:, issue:, remediation: for the revert it ships). Then the
 * command line, dist/cli.cjs, in a GitLab CI job's checkout that it makes (two merge requests, a
 * migration, a closing list): `change-tracking run` wraps a deploy that fails, keeps its exit
 * status, and the failed change it recorded, with what it shipped and its triage, is read back
 * with `get-change`. It ends by saying whether every step did what it should, and exits 0 if so.
 *
 * The test suite runs it on the bundles it built: `node scripts/demo.ts ACTION_ENTRY CLI_ENTRY`.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
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
/** The bundles: dist/, which `npm run bundle` builds, unless the arguments name others. */
const ACTION = process.argv[2] ?? join(DIST, 'index.js')
const CLI = process.argv[3] ?? join(DIST, 'cli.cjs')

/** What did not do what it should: the demo says each, and exits 1. */
const problems: string[] = []
function check(ok: boolean, what: string): void {
  if (!ok) problems.push(what)
}

/**
 * A GitLab job's checkout: an initial commit (the previous push), then a merge request merged as
 * GitLab writes it (closing three issues) and one squashed (adding a migration).
 */
function gitlabCheckout(folder: string): { before: string; head: string } {
  const env = {
    PATH: process.env['PATH'],
    HOME: folder,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Alice',
    GIT_AUTHOR_EMAIL: 'alice@example.com',
    GIT_COMMITTER_NAME: 'Alice',
    GIT_COMMITTER_EMAIL: 'alice@example.com'
  }
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: folder, env, encoding: 'utf8' }).trim()
  const commit = (message: string, path: string, text: string) => {
    writeFileSync(join(folder, path), text)
    git('add', path)
    git('commit', '-q', '-m', message)
  }
  git('init', '-q', '-b', 'main')
  git('remote', 'add', 'origin', 'https://gitlab.example.com/acme/shop.git')
  commit('Initial commit', 'README.md', '# Shop\n')
  const before = git('rev-parse', 'HEAD')
  git('checkout', '-q', '-b', 'login')
  commit('Add login', 'login.ts', 'export {}\n')
  git('checkout', '-q', 'main')
  const merge =
    "Merge branch 'login' into 'main'\n\nAdd login\n\nCloses #1, #2 and #3\n\nSee merge request acme/shop!41"
  git('merge', '-q', '--no-ff', '-m', merge, 'login')
  execFileSync('mkdir', ['-p', join(folder, 'db', 'migrations')])
  commit('Add the orders table (!42)', 'db/migrations/002_orders.sql', 'create table orders;\n')
  return { before, head: git('rev-parse', 'HEAD') }
}

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

for (const entry of [ACTION, CLI]) {
  if (!existsSync(entry)) throw new Error(`${entry} does not exist: build it with npm run bundle`)
}
const certificate = await testCertificate()
const sample = sampleRepository()
const emulator = await Emulator.start({ cert: certificate })
const github = await FakeGitHub.start({
  repository: sample.repository,
  token: DEMO_TOKEN,
  cert: certificate
})
emulator.addHeartbeatMonitor('demo-monitor')
// The command line's job folder: a GitLab checkout, from which what shipped is read.
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
    entry: ACTION,
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
  check(!printed.join('\n').includes(DEMO_TOKEN), 'the GitHub token is never printed')

  heading('2. Read the change back (command: get-change)')
  const read = await runBundledAction({
    entry: ACTION,
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
    entry: ACTION,
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
    entry: ACTION,
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
  check(
    [recorded, read, before, after].every(run => run.exitCode === 0),
    'every step of the action exits 0'
  )

  heading("4. The command line in a GitLab CI job: change-tracking run -- sh -c 'exit 1'")
  const checkout = gitlabCheckout(jobFolder)
  const job = {
    ...gitlabJob(checkout.head),
    CI_COMMIT_BEFORE_SHA: checkout.before,
    CI_SERVER_URL: 'https://gitlab.example.com'
  }
  console.log('Its checkout: two merge requests since the previous push, one adding a migration.')
  console.log("The job's variables (the API key is in CHANGE_TRACKING_API_KEY):")
  for (const [name, value] of Object.entries(job)) console.log(`  ${name}=${value}`)
  // The CI's variables and the service's: nothing of this process's environment but PATH.
  const cliEnv = {
    PATH: process.env['PATH'],
    ...job,
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
  const { change: stored = {} } = JSON.parse(readBack.stdout || '{}') as {
    change?: Record<string, unknown>
  }
  const metadata = (stored['custom_metadata'] ?? {}) as Record<string, Record<string, unknown>>
  heading('The failed deploy, as get-change read it back')
  const { description, service, version, user, environment, labels } = stored
  console.log(
    JSON.stringify(
      { description, service, version, user, environment, labels, ...metadata },
      null,
      2
    )
  )
  check(wrapped.exitCode === 1, "change-tracking run exits with the deploy's own status, 1")
  check(readBack.exitCode === 0, 'change-tracking get-change exits 0')
  check(
    labels === 'outcome:failure,risk:migration',
    'the change is labelled outcome:failure,risk:migration'
  )
  const numbers = (metadata['git']?.['pull_requests'] as { number: number }[] | undefined) ?? []
  check(
    numbers.map(pull => pull.number).join() === '41,42',
    'the change lists the merge requests !41 and !42'
  )
  check(
    String(metadata['git']?.['closes']) === '#1,#2,#3',
    'the change lists the issues its merge request closes'
  )
} finally {
  await Promise.all([emulator.close(), github.close()])
  rmSync(jobFolder, { recursive: true, force: true })
}

heading('Done')
if (problems.length === 0) {
  console.log('The demo ran as it should: every step did what it says.')
} else {
  for (const problem of problems) console.log(`Not as it should: ${problem}.`)
  process.exitCode = 1
}

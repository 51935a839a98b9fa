/**
 * npm run demo: try the action in one command, with no account. It starts the service emulator,
 * runs the bundled action as the runner would on a push to main, and shows what happened: the
 * outputs, the job summary, and the change read back from the emulator by the action itself.
 */
import { Emulator } from '../emulator/emulator.ts'
import { runAction, type ActionRun } from '../__tests__/support/run-action.ts'
import { testCertificate } from '../emulator/tls.ts'

const PUSH_EVENT = {
  ref: 'refs/heads/main',
  before: '9f8e7d6c5b4a39281706f5e4d3c2b1a098765432',
  after: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
  repository: { full_name: 'octo-org/octo-repo', default_branch: 'main' },
  pusher: { name: 'octocat', email: 'octocat@example.com' },
  head_commit: {
    id: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
    message: 'Speed up checkout',
    author: { name: 'Mona Octocat', username: 'octocat' }
  }
}

function heading(text: string): void {
  console.log(`\n\x1b[1m== ${text}\x1b[0m`)
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

const certificate = await testCertificate()
const emulator = await Emulator.start({ cert: certificate })
emulator.addHeartbeatMonitor('demo-monitor')
try {
  const inputs = { 'api-key': emulator.apiKey, 'base-url': emulator.url }
  console.log(`Emulator listening at ${emulator.url} (a local stand-in for the service).`)

  heading('1. Record the deploy (push to main) and ping the heartbeat monitor')
  const recorded = await runAction({
    inputs: { ...inputs, 'heartbeat-id': 'demo-monitor', labels: 'deploy, web' },
    eventName: 'push',
    payload: PUSH_EVENT,
    caCertPath: certificate.certPath
  })
  show(recorded)
  heading('Job summary')
  console.log(recorded.summary.trim())

  heading('2. Read the change back (command: get-change)')
  const read = await runAction({
    inputs: { ...inputs, command: 'get-change', 'change-id': recorded.outputs['change-id'] ?? '' },
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
  if (recorded.exitCode !== 0 || read.exitCode !== 0) process.exitCode = 1
} finally {
  await emulator.close()
}

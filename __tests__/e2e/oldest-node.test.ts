/**
 * The command line's bundle on a Node older than the one package.json's `engines` names: every
 * command exits 2 at once with one line, and nothing is run or recorded. The process here is Node
 * 24 told that it is an older one (its `process.version` replaced before the bundle loads); .ci/run
 * runs the packed command line on real Node 18 and on a Node just below the minimum.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Emulator } from '../../emulator/emulator.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { cliEntry } from '../support/bundle.ts'
import { NODE_24, PROJECT_ROOT } from '../support/run-action.ts'

const run = promisify(execFile)
const engines = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).engines
const MINIMUM = String(engines.node).replace(/^>=\s*/, '')
/** The patch release before the minimum, or the minor before when the minimum is an x.y.0. */
const [major, minor, patch] = MINIMUM.split('.').map(Number)
const JUST_BELOW = patch > 0 ? `${major}.${minor}.${patch - 1}` : `${major}.${minor - 1}.99`

let emulator: Emulator
let certPath: string
let entry: string
beforeAll(async () => {
  certPath = (await testCertificate()).certPath
  emulator = await Emulator.start()
  entry = await cliEntry()
})
afterAll(async () => {
  await emulator.close()
})

/** The bundle with ARGS on Node 24 that says it is `version`. */
async function onNode(version: string, args: string[]) {
  const pretend = `data:text/javascript,Object.defineProperty(process,"version",{value:"v${version}"})`
  const env = {
    PATH: process.env['PATH'] ?? '',
    NODE_EXTRA_CA_CERTS: certPath,
    CHANGE_TRACKING_API_KEY: emulator.apiKey,
    CHANGE_TRACKING_BASE_URL: emulator.url
  }
  try {
    const { stdout, stderr } = await run(NODE_24, ['--import', pretend, entry, ...args], { env })
    return { status: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { status: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

/** The command that would run a deploy. */
const RUN = ['run', '--service', 'web', '--version', 'v1', '--', 'sh', '-c', 'echo deployed']
const COMMANDS = [
  ['--version'],
  ['change', '--service', 'web', '--version', 'v1'],
  RUN,
  ['heartbeat', '--heartbeat-id', 'nightly'],
  ['hello']
]

/** The one line every command says on such a Node, and the rest of what it prints and sends. */
async function expectRefused(version: string, args: string[]) {
  emulator.reset()
  const result = await onNode(version, args)
  expect(result.status).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr).toBe(
    `error: change-tracking needs Node ${MINIMUM} or later, and this is Node ${version}: ` +
      'nothing was run or recorded. Install a newer Node, or the standalone executable, ' +
      'which needs none.\n'
  )
  expect(emulator.requests).toEqual([])
}

describe('on a Node older than the engines field names', () => {
  // The check comes before the command line is read: every command on the version just below,
  // and on older ones the command that would run a deploy.
  it(`Node ${JUST_BELOW}: every command exits 2 with one line, running and recording nothing`, async () => {
    for (const args of COMMANDS) await expectRefused(JUST_BELOW, args)
  })

  it.each(['18.20.8', '20.0.0'])(
    'Node %s: run exits 2 with one line, running and recording nothing',
    async version => {
      await expectRefused(version, RUN)
    }
  )

  it('runs on the minimum itself', async () => {
    const result = await onNode(MINIMUM, ['change', '--service', 'web', '--version', 'v1'])
    expect(result.stderr).toContain('Recorded change')
    expect(result.status).toBe(0)
  })
})

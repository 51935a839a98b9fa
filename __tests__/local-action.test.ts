/**
 * GitHub's own local runner for JavaScript actions, @github/local-action, runs the action from
 * its sources with its stand-in for @actions/core: it sees only what goes through core's public
 * API. Here it records a change on the emulator (run as `npm run emulator` would).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'

const API_KEY = 'local-action-key-5f1e2d3c'
const NODE = join('node_modules', '.bin', 'node')
let dir: string
let emulator: ChildProcess
let url: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cta-local-action-'))
  const ready = join(dir, 'ready.json')
  emulator = spawn(
    NODE,
    [
      'emulator/cli.ts',
      '--api-key',
      API_KEY,
      '--cert-out',
      join(dir, 'cert.pem'),
      '--ready-file',
      ready
    ],
    {
      stdio: 'ignore'
    }
  )
  for (let i = 0; i < 100 && !existsSync(ready); i++) await delay(100)
  url = (JSON.parse(readFileSync(ready, 'utf8')) as { url: string }).url
})

afterAll(() => {
  emulator.kill()
  rmSync(dir, { recursive: true, force: true })
})

it('records a change under @github/local-action, which sees its outputs and never the key', () => {
  const envFile = join(dir, '.env')
  writeFileSync(
    envFile,
    [
      `INPUT_API-KEY=${API_KEY}`,
      `INPUT_BASE-URL=${url}`,
      'INPUT_INCLUDE-COMMITS=false',
      'INPUT_DESCRIPTION=Deploy from local-action',
      'GITHUB_REPOSITORY=acme/shop',
      'GITHUB_SHA=6113728f0e1d2c3b4a5968778695a4b3c2d1e0f9',
      'GITHUB_ACTOR=alice',
      'GITHUB_EVENT_NAME=workflow_dispatch'
    ].join('\n')
  )
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') }
  for (const name of ['HTTPS_PROXY', 'https_proxy', 'GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY'])
    delete env[name]
  const result = spawnSync(
    join('node_modules', '.bin', 'local-action'),
    ['run', '.', 'src/main.ts', envFile],
    {
      env,
      encoding: 'utf8',
      timeout: 60_000
    }
  )
  const printed = `${result.stdout}\n${result.stderr}`
  const outputs = printed.slice(printed.indexOf('Action Outputs'))
  expect(outputs).toMatch(/'change-id'\s*│\s*'[0-9a-f-]{36}'/)
  expect(printed).toContain('::notice::Recorded change')
  expect(printed).not.toContain(API_KEY)
}, 90_000)

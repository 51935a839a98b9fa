/**
 * Several services in one step, end to end: the bundled action (its lazily loaded services and
 * matcher) against the emulator and the fake GitHub API, recording a change only for the services
 * whose paths the deploy touched. Incomplete file lists, many services from one lookup, a service
 * whose change fails, and service with services: affected-services.test.ts, step.test.ts,
 * commands/services.test.ts and values/read-settings.test.ts, in process.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { FakeGitHub, type GitHubCommit } from '../../emulator/github.ts'
import { testCertificate } from '../../emulator/tls.ts'
import { actionAgainst, type ActionRun } from '../support/run-action.ts'

const TOKEN = 'ghs_servicesToken0123456789'
const REPOSITORY = 'octo-org/octo-repo'
const sha = (n: number): string => n.toString(16).padStart(40, '0')

/** Five commits: three touch the API, one the web app's docs, one the web app. */
const COMMITS: GitHubCommit[] = [
  {
    sha: sha(1),
    message: 'Start',
    author: { name: 'Alice', login: 'alice' },
    files: [{ filename: 'README.md' }]
  },
  {
    sha: sha(2),
    message: 'API: login (#41)',
    author: { name: 'Alice', login: 'alice' },
    files: [{ filename: 'services/api/login.ts' }]
  },
  {
    sha: sha(3),
    message: 'Web docs',
    author: { name: 'Bob' },
    files: [{ filename: 'apps/web/docs/guide.md' }]
  },
  {
    sha: sha(4),
    message: 'Common lib',
    author: { name: 'Alice', login: 'alice' },
    files: [{ filename: 'libs/common/util.ts' }]
  },
  {
    sha: sha(5),
    message: 'API: cart (#42)',
    author: { name: 'Bob' },
    files: [{ filename: 'services/api/cart.ts' }]
  },
  {
    sha: sha(6),
    message: 'Web header',
    author: { name: 'Bob' },
    files: [{ filename: 'apps/web/header.tsx' }]
  }
]

const SERVICES = [
  'api: services/api/** libs/common/**',
  'web: apps/web/** !apps/web/**/*.md',
  'billing: services/billing/**',
  '# docs are deployed with everything',
  'docs'
].join('\n')

let emulator: Emulator
let github: FakeGitHub
let action: ReturnType<typeof actionAgainst>

beforeAll(async () => {
  const certPath = (await testCertificate()).certPath
  emulator = await Emulator.start()
  github = await FakeGitHub.start({
    token: TOKEN,
    repository: { fullName: REPOSITORY, commits: COMMITS }
  })
  action = actionAgainst(emulator, certPath)
})
afterAll(async () => {
  await Promise.all([emulator.close(), github.close()])
})
beforeEach(() => {
  emulator.reset()
  github.reset()
  github.repository = { fullName: REPOSITORY, commits: COMMITS }
})

function deploy(inputs: Record<string, string>, version = sha(6)): Promise<ActionRun> {
  return action(
    {
      'github-token': TOKEN,
      'include-commits': 'true',
      'previous-version': sha(1),
      environment: 'production',
      ...inputs
    },
    { eventName: 'workflow_dispatch', env: { GITHUB_SHA: version, GITHUB_API_URL: github.url } }
  )
}

function stored(run: ActionRun, service: string): Record<string, unknown> {
  const id = (JSON.parse(run.outputs['change-ids']) as Record<string, string>)[service]
  return emulator.changes.get(id) as unknown as Record<string, unknown>
}

it('records a change for each touched service and for those without patterns, and skips the rest', async () => {
  emulator.addHeartbeatMonitor('deploys')
  const run = await deploy({ services: SERVICES, 'heartbeat-id': 'deploys' })
  expect(run.exitCode).toBe(0)
  const ids = JSON.parse(run.outputs['change-ids']) as Record<string, string>
  expect(Object.keys(ids).sort()).toEqual(['api', 'docs', 'web'])
  expect(JSON.parse(run.outputs['skipped-services'])).toEqual(['billing'])
  expect(run.outputs['change-id']).toBeUndefined()
  const api = stored(run, 'api')
  expect(api).toMatchObject({ service: 'api', version: sha(6), environment: 'production' })
  expect(JSON.parse(String(api['custom_metadata'])).github).toMatchObject({
    changed_paths: ['services/api/login.ts', 'libs/common/util.ts', 'services/api/cart.ts'],
    changed_paths_count: 3
  })
  expect(String(api['description'])).toMatch(
    /^api: .* of octo-org\/octo-repo: 3 matching files changed in 5 commits since 0000000/
  )
  expect(JSON.parse(String(stored(run, 'web')['custom_metadata'])).github.changed_paths).toEqual([
    'apps/web/header.tsx'
  ])
  expect(run.summary).toMatch(/\| billing \| skipped \|/)
  expect(run.summary).toMatch(new RegExp(`\\| api \\| ${ids['api']} \\|`))
  expect(emulator.requestsTo('POST /v1/heartbeat/*')).toHaveLength(1)
})

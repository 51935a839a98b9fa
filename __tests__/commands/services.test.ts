/**
 * Several services in one step, in process: which services are recorded, what each change says,
 * the outputs, a failure of one of them, and the dry run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import nock from 'nock'
import { runContextOf } from '../../src/action/run-context.ts'
import { readSettings } from '../../src/values/read-settings.ts'
import { contextDefaults } from '../../src/action/defaults.ts'
import { recordServices } from '../../src/commands/services.ts'
import { ServiceError } from '../../src/errors.ts'
import { Redactor } from '../../src/redact.ts'
import { Report } from '../../src/report.ts'
import { ServiceClient, type ChangeRequest, type ChangeService } from '../../src/service/client.ts'
import { Transport } from '../../src/service/transport.ts'
import { DryRunClient } from '../../src/service/dry-run-client.ts'
import { emptyShipped, type Shipped } from '../../src/shipped/types.ts'
import type { Triage } from '../../src/triage/triage.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { ACTION_WORDS } from '../../src/main.ts'

const SERVICES = 'api: services/api/**\nweb: services/web/**\ndocs: docs/**\nbilling'
const PREVIOUS = 'a'.repeat(40)
const VERSION = 'b'.repeat(40)
const NOW = Date.parse('2026-11-23T12:00:00Z')
const SERVICE_URL = 'https://service.example/'

/**
 * The service through the real client, nock answering: every change is recorded, but those of the
 * services named, which are answered 503.
 */
function service(failFor: string[] = []): { client: ChangeService; changes: ChangeRequest[] } {
  const changes: ChangeRequest[] = []
  nock(SERVICE_URL)
    .persist()
    .post('/v2/change')
    .reply(async (request: Request) => {
      const change = (await request.json()) as ChangeRequest
      if (failFor.includes(change.service ?? '')) return [503, { message: 'The service is down.' }]
      changes.push(change)
      return [201, { id: `chg-${change.service}` }]
    })
  const transport = new Transport({
    baseUrl: new URL(SERVICE_URL),
    apiKey: 'test-api-key-0123456789',
    timeoutMs: 5000,
    maxAttempts: 1,
    userAgent: 'test',
    redactor: new Redactor(),
    advice: {
      raiseTimeout: 'wait',
      checkAddress: 'check the address',
      checkApiKey: 'check the key'
    }
  })
  return { client: new ServiceClient(transport), changes }
}

beforeAll(() => nock.disableNetConnect())
afterEach(() => nock.cleanAll())
afterAll(() => {
  nock.enableNetConnect()
  nock.restore()
})

function shippedWith(paths: string[] | undefined): Shipped {
  return {
    ...emptyShipped(),
    previousSha: PREVIOUS,
    commitCount: 2,
    ...(paths ? { changedFiles: paths.map(path => ({ path })) } : {}),
    changedFilesComplete: paths !== undefined
  }
}

async function record(
  options: {
    shipped?: Shipped
    client?: ChangeService
    inputs?: Record<string, string>
    triage?: Triage
  } = {}
) {
  const runner = new FakeRunner({
    'api-key': 'test-api-key-0123456789',
    'base-url': 'https://service.example/',
    services: SERVICES,
    ...options.inputs
  })
  const settings = readSettings(name => runner.getInput(name))
  const run = contextDefaults(
    runContextOf(
      { GITHUB_REPOSITORY: 'octo/mono', GITHUB_SHA: VERSION, GITHUB_EVENT_NAME: 'push' },
      {}
    ),
    '/work'
  )
  const report = new Report(
    runner,
    new Redactor(),
    ACTION_WORDS,
    options.client instanceof DryRunClient
  )
  const client = options.client ?? service().client
  let error: unknown
  try {
    await recordServices(
      { settings, run, client, report, clock: () => NOW },
      { run, shipped: options.shipped, recordedAt: NOW, triage: options.triage },
      change => client.createChange(change)
    )
  } catch (caught) {
    error = caught
  }
  await report.finish({ error, policy: 'false', jobSummary: true })
  return { runner, client, error }
}

describe('recordServices', () => {
  it('records the services whose files changed, and those without patterns', async () => {
    const { client, changes } = service()
    const { runner } = await record({
      client,
      shipped: shippedWith(['services/api/main.ts', 'services/api/db.ts', 'README.md'])
    })
    expect(changes.map(change => change.service)).toEqual(['api', 'billing'])
    expect(runner.outputs['change-ids']).toBe('{"api":"chg-api","billing":"chg-billing"}')
    expect(runner.outputs['skipped-services']).toBe('["web","docs"]')
    expect('change-id' in runner.outputs).toBe(false)
    const api = JSON.parse(changes[0].custom_metadata ?? '{}') as {
      github: Record<string, unknown>
    }
    expect(api.github['changed_paths']).toEqual(['services/api/main.ts', 'services/api/db.ts'])
    expect(api.github['changed_paths_count']).toBe(2)
    expect(changes[0].description).toBe(
      `api: Deploy bbbbbbb of octo/mono: 2 matching files changed in 2 commits since aaaaaaa`
    )
  })

  it('records a service whose changed path holds a line break, sending the path as given', async () => {
    const { client, changes } = service()
    await record({ client, shipped: shippedWith(['services/api/\nmain.ts', 'docs/\u2028a.md']) })
    expect(changes.map(change => change.service)).toEqual(['api', 'docs', 'billing'])
    const api = JSON.parse(changes[0].custom_metadata ?? '{}') as {
      github: Record<string, unknown>
    }
    expect(api.github['changed_paths']).toEqual(['services/api/\nmain.ts'])
  })

  /** A monorepo deploy: a migration in api, a revert in web, a documentation fix in docs. */
  function monorepo(touched: boolean): Shipped {
    const commits = [
      ['1'.repeat(40), 'ENG-1 Add the orders table', 'services/api/db/migrate/1_orders.rb'],
      ['2'.repeat(40), 'Revert "Faster pages"', 'services/web/a.ts'],
      ['3'.repeat(40), 'Document the API\n\nFixes #7', 'docs/api.md']
    ]
    return {
      ...shippedWith(commits.map(([, , path]) => path)),
      commits: commits.map(([sha, message]) => ({ sha, message: message.split('\n')[0] })),
      messages: commits.map(([, message]) => message),
      pullRequestsComplete: true,
      ...(touched && { touched: Object.fromEntries(commits.map(([sha, , path]) => [sha, [path]])) })
    }
  }
  const DEPLOY_TRIAGE: Triage = {
    risk: { migration: ['services/api/db/migrate/1_orders.rb'] },
    riskComplete: true,
    issues: ['ENG-1'],
    remediation: { type: 'revert', reverts: [] }
  }

  it('gives each service the triage of what it shipped: a documentation service carries no migration', async () => {
    const { client, changes } = service()
    const { runner } = await record({
      client,
      shipped: monorepo(true),
      inputs: { labels: 'team:mono' },
      triage: DEPLOY_TRIAGE
    })
    expect(changes.map(change => [change.service, change.labels])).toEqual([
      ['api', 'team:mono,risk:migration,issue:ENG-1'],
      ['web', 'team:mono,remediation:revert'],
      ['docs', 'team:mono'],
      // No patterns: no paths of its own, so the whole deploy's.
      ['billing', 'team:mono,remediation:revert,risk:migration,issue:ENG-1']
    ])
    const docs = JSON.parse(changes[2].custom_metadata ?? '{}')
    expect(docs.github).toMatchObject({ closes: ['#7'], risk_complete: true })
    expect(docs.github.risk).toBeUndefined()
    expect(docs.remediation).toBeUndefined()
    expect(runner.lines).toContain('api: Triage: risk migration; issues ENG-1.')
  })

  it("keeps the whole deploy's keys, said to be a part, when the lookup cannot tell which commits touched which paths", async () => {
    const { client, changes } = service()
    await record({ client, shipped: monorepo(false), triage: DEPLOY_TRIAGE })
    const docs = JSON.parse(changes[2].custom_metadata ?? '{}')
    expect(changes[2].labels).toBe('remediation:revert,issue:ENG-1')
    expect(docs.github).toMatchObject({ issues: ['ENG-1'], issues_complete: false, closes: ['#7'] })
    expect(docs.github.risk).toBeUndefined()
  })

  it('outputs change-id when exactly one change is recorded', async () => {
    const { runner } = await record({
      shipped: shippedWith(['docs/index.md']),
      inputs: { services: 'api: services/api/**\ndocs: docs/**' }
    })
    expect(runner.outputs['change-id']).toBe('chg-docs')
  })

  it('records every service, saying why, when the changed files are unknown', async () => {
    const { client, changes } = service()
    const { runner } = await record({ client, shipped: undefined })
    expect(changes).toHaveLength(4)
    expect(runner.notices[0]).toMatch(/^Every service is selected: .*unknown/)
    expect(runner.summary).toContain('Every service is selected')
  })

  it('names each service not recorded, keeps the ids of the others, and stays an outage only if all were', async () => {
    const { runner, error } = await record({ shipped: undefined, client: service(['web']).client })
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).kind).toBe('outage')
    expect((error as Error).message).toBe(
      '1 service not recorded (3 others recorded). web: POST /v2/change failed with HTTP 503 Service Unavailable: The service is down. The service is unavailable: try again later.'
    )
    expect(JSON.parse(runner.outputs['change-ids'])).toEqual({
      api: 'chg-api',
      docs: 'chg-docs',
      billing: 'chg-billing'
    })
    expect(runner.summary).toMatch(/\| web \| not recorded \|/)
  })

  it('keeps a mistake a mistake, whatever the number of services: a host not found is no outage', async () => {
    const notFound = new ServiceError(
      'POST /v2/change was not sent: the host was not found (ENOTFOUND).',
      {
        kind: 'configuration',
        call: 'POST /v2/change'
      }
    )
    const client = {
      createChange: async ({ service }: { service?: string }) => {
        if (service === 'web') throw notFound
        return `chg-${service}`
      }
    } as unknown as ChangeService
    const { runner, error } = await record({ shipped: undefined, client })
    expect((error as ServiceError).kind).toBe('configuration')
    expect(runner.lines).toContain('web: selected: the changed files are unknown')
    expect(runner.lines.join('\n')).not.toMatch(/: recorded: /)
  })

  it('in a dry run prints each change it would send and sets no output', async () => {
    const runner = new FakeRunner({})
    const report = new Report(runner, new Redactor(), ACTION_WORDS)
    const printed: string[] = []
    const dryRun = new DryRunClient(new URL('https://service.example/'), (request, url) =>
      printed.push(`${request.method} ${url.href} ${String(request.body)}`)
    )
    const result = await record({ shipped: shippedWith(['services/web/a.css']), client: dryRun })
    expect(printed).toHaveLength(2)
    expect(printed[0]).toMatch(/^POST https:\/\/service\.example\/v2\/change \{.*"service":"web"/)
    expect(printed[1]).toMatch(/"service":"billing"/)
    expect(result.runner.outputs).toEqual({})
    expect(result.runner.summary).toContain('## 2 changes not sent')
    expect(result.runner.lines).toContain('api: skipped: no changed file matches its patterns')
    expect(report).toBeDefined()
  })
})

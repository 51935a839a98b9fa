/**
 * Several services in one step, through no door: which services are recorded, what each change
 * says, the outputs, a failure of one of them, and the dry run.
 */
import { describe, expect, it } from '@jest/globals'
import type { RunDefaults } from '../../src/change.ts'
import { recordServices } from '../../src/commands/services.ts'
import { ServiceError } from '../../src/errors.ts'
import {
  ServiceEndpoints,
  type ChangeRequest,
  type ChangeService
} from '../../src/service/client.ts'
import type { ServiceRequest } from '../../src/service/request.ts'
import { emptyShipped, type Shipped } from '../../src/shipped/types.ts'
import type { Triage } from '../../src/triage/triage.ts'
import { finish, NOW, runCommandWith } from '../support/command-context.ts'

const SERVICES = 'api: services/api/**\nweb: services/web/**\ndocs: docs/**\nbilling'
const PREVIOUS = 'a'.repeat(40)
const VERSION = 'b'.repeat(40)
/** A push to the monorepo, as a door gives it. */
const RUN: RunDefaults = {
  service: 'octo/mono',
  version: VERSION,
  eventDescription: 'Deploy bbbbbbb of octo/mono',
  metadata: { key: 'github', fields: { repository: 'octo/mono', sha: VERSION } },
  workspace: '/work'
}

/**
 * The service behind the real endpoints: every change is recorded as chg-<service>, but those of
 * the services named, which fail with their error.
 */
class FakeService extends ServiceEndpoints {
  readonly changes: ChangeRequest[] = []
  private readonly failures: Readonly<Record<string, Error>>

  constructor(failures: Record<string, Error> = {}) {
    super()
    this.failures = failures
  }

  protected async exchange<T>(_endpoint: unknown, request: ServiceRequest): Promise<T> {
    const change = JSON.parse(String(request.body)) as ChangeRequest
    const failure = this.failures[change.service ?? '']
    if (failure) throw failure
    this.changes.push(change)
    return `chg-${change.service}` as T
  }
}

function shippedWith(paths: string[] | undefined): Shipped {
  return {
    ...emptyShipped(),
    previousSha: PREVIOUS,
    commitCount: 2,
    ...(paths ? { changedFiles: paths.map(path => ({ path })) } : {}),
    changedFilesComplete: paths !== undefined
  }
}

/** The services' changes recorded against `client`, their outputs and summary written. */
async function record(
  options: {
    shipped?: Shipped
    client?: ChangeService
    inputs?: Record<string, string>
    triage?: Triage
  } = {}
) {
  const inputs = {
    'api-key': 'test-api-key-0123456789',
    'base-url': 'https://service.example/',
    services: SERVICES,
    ...options.inputs
  }
  const basis = { run: RUN, shipped: options.shipped, recordedAt: NOW, triage: options.triage }
  const ran = await runCommandWith(inputs, RUN, context => recordServices(context, basis), {
    client: options.client ?? new FakeService()
  })
  await finish(ran)
  return ran
}

describe('recordServices', () => {
  it('records the services whose files changed, and those without patterns', async () => {
    const service = new FakeService()
    const { result, recorder } = await record({
      client: service,
      shipped: shippedWith(['services/api/main.ts', 'services/api/db.ts', 'README.md'])
    })
    expect(service.changes.map(change => change.service)).toEqual(['api', 'billing'])
    expect(result?.title.done).toEqual({
      subject: '2 changes',
      outcome: 'recorded',
      rest: ', 2 skipped'
    })
    expect(recorder.outputs['change-ids']).toBe('{"api":"chg-api","billing":"chg-billing"}')
    expect(recorder.outputs['skipped-services']).toBe('["web","docs"]')
    expect('change-id' in recorder.outputs).toBe(false)
    const api = JSON.parse(service.changes[0].custom_metadata ?? '{}') as {
      github: Record<string, unknown>
    }
    expect(api.github['changed_paths']).toEqual(['services/api/main.ts', 'services/api/db.ts'])
    expect(api.github['changed_paths_count']).toBe(2)
    expect(service.changes[0].description).toBe(
      `api: Deploy bbbbbbb of octo/mono: 2 matching files changed in 2 commits since aaaaaaa`
    )
  })

  it('records a service whose changed path holds a line break, sending the path as given', async () => {
    const service = new FakeService()
    await record({
      client: service,
      shipped: shippedWith(['services/api/\nmain.ts', 'docs/\u2028a.md'])
    })
    expect(service.changes.map(change => change.service)).toEqual(['api', 'docs', 'billing'])
    const api = JSON.parse(service.changes[0].custom_metadata ?? '{}') as {
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
    const service = new FakeService()
    const { recorder } = await record({
      client: service,
      shipped: monorepo(true),
      inputs: { labels: 'team:mono' },
      triage: DEPLOY_TRIAGE
    })
    expect(service.changes.map(change => [change.service, change.labels])).toEqual([
      ['api', 'team:mono,risk:migration,issue:ENG-1'],
      ['web', 'team:mono,remediation:revert'],
      ['docs', 'team:mono'],
      // No patterns: no paths of its own, so the whole deploy's.
      ['billing', 'team:mono,remediation:revert,risk:migration,issue:ENG-1']
    ])
    const docs = JSON.parse(service.changes[2].custom_metadata ?? '{}')
    expect(docs.github).toMatchObject({ closes: ['#7'], risk_complete: true })
    expect(docs.github.risk).toBeUndefined()
    expect(docs.remediation).toBeUndefined()
    expect(recorder.lines).toContain('api: Triage: risk migration; issues ENG-1.')
  })

  it("keeps the whole deploy's keys, said to be a part, when the lookup cannot tell which commits touched which paths", async () => {
    const service = new FakeService()
    await record({ client: service, shipped: monorepo(false), triage: DEPLOY_TRIAGE })
    const docs = JSON.parse(service.changes[2].custom_metadata ?? '{}')
    expect(service.changes[2].labels).toBe('remediation:revert,issue:ENG-1')
    expect(docs.github).toMatchObject({ issues: ['ENG-1'], issues_complete: false, closes: ['#7'] })
    expect(docs.github.risk).toBeUndefined()
  })

  it('outputs change-id when exactly one change is recorded', async () => {
    const { recorder } = await record({
      shipped: shippedWith(['docs/index.md']),
      inputs: { services: 'api: services/api/**\ndocs: docs/**' }
    })
    expect(recorder.outputs['change-id']).toBe('chg-docs')
  })

  it('records every service, saying why, when the changed files are unknown', async () => {
    const service = new FakeService()
    const { recorder } = await record({ client: service, shipped: undefined })
    expect(service.changes).toHaveLength(4)
    expect(recorder.notices[0]).toMatch(/^Every service is selected: .*unknown/)
    expect(recorder.summary).toContain('Every service is selected')
  })

  it('names each service not recorded, keeps the ids of the others, and stays an outage only if all were', async () => {
    const unavailable = new ServiceError(
      'POST /v2/change failed with HTTP 503 Service Unavailable: The service is down. The service is unavailable: try again later.',
      { kind: 'outage', call: 'POST /v2/change', status: 503 }
    )
    const { result, error, recorder } = await record({
      shipped: undefined,
      client: new FakeService({ web: unavailable })
    })
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).kind).toBe('outage')
    expect((error as Error).message).toBe(
      '1 service not recorded (3 others recorded). web: POST /v2/change failed with HTTP 503 Service Unavailable: The service is down. The service is unavailable: try again later.'
    )
    expect(result?.title.notDone?.what).toBe('1 change not recorded')
    expect(JSON.parse(recorder.outputs['change-ids'])).toEqual({
      api: 'chg-api',
      docs: 'chg-docs',
      billing: 'chg-billing'
    })
    expect(recorder.summary).toMatch(/\| web \| not recorded \|/)
  })

  it('keeps a mistake a mistake, whatever the number of services: a host not found is no outage', async () => {
    const notFound = new ServiceError(
      'POST /v2/change was not sent: the host was not found (ENOTFOUND).',
      { kind: 'configuration', call: 'POST /v2/change' }
    )
    const { error, recorder } = await record({
      shipped: undefined,
      client: new FakeService({ web: notFound })
    })
    expect((error as ServiceError).kind).toBe('configuration')
    expect(recorder.lines).toContain('web: selected: the changed files are unknown')
    expect(recorder.lines.join('\n')).not.toMatch(/: recorded: /)
  })

  it('in a dry run prints each change it would send and sets no output', async () => {
    const inputs = {
      'api-key': 'test-api-key-0123456789',
      'base-url': 'https://service.example/',
      services: SERVICES,
      'dry-run': 'true'
    }
    const basis = { run: RUN, shipped: shippedWith(['services/web/a.css']), recordedAt: NOW }
    const dryRun = await runCommandWith(inputs, RUN, context => recordServices(context, basis))
    await finish(dryRun)
    const { lines, outputs, summary } = dryRun.recorder
    const posts = lines.filter(line => line.startsWith('[dry-run] '))
    expect(posts).toEqual(Array(2).fill('[dry-run] POST https://service.example/v2/change'))
    const printed = lines.filter(line => line.startsWith('  {')).map(line => JSON.parse(line))
    expect(printed.map(change => change.service)).toEqual(['web', 'billing'])
    expect(outputs).toEqual({})
    expect(summary).toContain('## 2 changes not sent')
    expect(lines).toContain('api: skipped: no changed file matches its patterns')
  })
})

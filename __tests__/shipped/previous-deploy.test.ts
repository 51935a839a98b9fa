/**
 * The previous deploy, by the first rule that finds one: the previous-version input, a successful
 * deployment to the environment, the previous release, the previous successful run of the
 * workflow; a refused rule passes to the next, a refused token ends the search.
 */
import { describe, expect, it } from '@jest/globals'
import { GitHubFaults, type GitHubWorkflowRun } from '../../emulator/github.ts'
import { findPreviousDeploy } from '../../src/shipped/previous-deploy.ts'
import type { LookupOptions } from '../../src/shipped/types.ts'
import { history, queryFor, sha, THIS_RUN, useFakeGitHub, withGitHub } from './fake-github.ts'

/** This run (in progress, on main, at the version sha(12)) and the runs before it. */
const RUNS: GitHubWorkflowRun[] = [
  { id: 4997, workflow_id: 7, head_branch: 'main', head_sha: sha(8), conclusion: 'failure' },
  { id: 4996, workflow_id: 7, head_branch: 'dev', head_sha: sha(10) },
  { id: 4998, workflow_id: 7, head_branch: 'main', head_sha: sha(9) },
  // A re-run of this very version is no previous deploy.
  { id: 4999, workflow_id: 7, head_branch: 'main', head_sha: sha(12) },
  THIS_RUN
]

const fake = useFakeGitHub(() => ({ commits: history(12), runs: RUNS }))

async function find(overrides: Partial<LookupOptions> = {}) {
  return withGitHub(fake(), async github => ({
    ...(await findPreviousDeploy(github, queryFor(fake(), overrides))),
    calls: github.calls()
  }))
}

describe('the previous-version input', () => {
  it('is taken as given, a SHA in lower case, with no call', async () => {
    expect(await find({ previousVersion: ` ${sha(3).toUpperCase()} ` })).toEqual({
      previous: { ref: sha(3).toUpperCase(), sha: sha(3), source: 'input' },
      failures: [],
      calls: 0
    })
    expect(await find({ previousVersion: 'v1.0.0' })).toMatchObject({
      previous: { ref: 'v1.0.0', source: 'input' },
      calls: 0
    })
  })
})

describe('deployments to the environment', () => {
  const CURRENT = { id: 4, created_at: '2026-03-01T10:00:00Z' }

  it("is the newest earlier one whose latest status succeeded, past this run's own and later ones", async () => {
    fake().repository.deployments = [
      {
        id: 1,
        sha: sha(4),
        environment: 'production',
        statuses: ['success', 'inactive'],
        created_at: '2026-02-01T00:00:00Z'
      },
      {
        id: 2,
        sha: sha(6),
        environment: 'production',
        statuses: ['success', 'failure'],
        created_at: '2026-02-02T00:00:00Z'
      },
      {
        id: 3,
        sha: sha(8),
        environment: 'staging',
        statuses: ['success'],
        created_at: '2026-02-03T00:00:00Z'
      },
      { ...CURRENT, sha: sha(12), environment: 'production', statuses: ['in_progress'] },
      {
        id: 5,
        sha: sha(11),
        environment: 'production',
        statuses: ['success'],
        created_at: '2026-03-02T00:00:00Z'
      }
    ]
    const found = await find({ environment: 'production', payload: { deployment: CURRENT } })
    expect(found).toMatchObject({
      previous: { ref: sha(4), sha: sha(4), source: 'deployment' },
      failures: [],
      calls: 3
    })
  })

  it('passes to the workflow runs when none of the candidates succeeded', async () => {
    fake().repository.deployments = [1, 2, 3].map(id => ({
      id,
      sha: sha(id),
      environment: 'production',
      statuses: id === 3 ? ['error'] : []
    }))
    const found = await find({ environment: 'production' })
    expect(found).toMatchObject({
      previous: { ref: sha(9), sha: sha(9), source: 'workflow-run' },
      runStartedAt: '2026-03-01T10:00:05Z',
      calls: 5
    })
  })

  it('passes a refusal on to the next rule, naming it', async () => {
    fake().inject('GET /repos/*/*/deployments', GitHubFaults.forbidden)
    const found = await find({ environment: 'production' })
    expect(found.previous).toMatchObject({ source: 'workflow-run' })
    expect(found.failures.map(failure => failure.message)).toEqual([
      expect.stringContaining('deployments answered HTTP 403')
    ])
  })

  it('ends the search when the token is refused', async () => {
    fake().inject('GET /repos/*/*/deployments', GitHubFaults.badCredentials)
    const found = await find({ environment: 'production' })
    expect(found.previous).toBeUndefined()
    expect(found.failures).toHaveLength(1)
    expect(found.calls).toBe(1)
  })
})

describe('releases, on release events', () => {
  const release = (tag: string) => ({ action: 'published', release: { tag_name: tag } })

  it('is the previous published release, past drafts and this one', async () => {
    fake().repository.releases = [
      { tag_name: 'v1.0.0', published_at: '2026-01-01T00:00:00Z' },
      { tag_name: 'v1.1.0', draft: true },
      { tag_name: 'v1.2.0', published_at: '2026-02-01T00:00:00Z' }
    ]
    expect(await find({ eventName: 'release', payload: release('v1.2.0') })).toMatchObject({
      previous: { ref: 'v1.0.0', source: 'release' },
      calls: 1
    })
  })

  it('passes to the workflow runs when there is no earlier release', async () => {
    fake().repository.releases = [{ tag_name: 'v1.0.0' }]
    const found = await find({ eventName: 'release', payload: release('v1.0.0') })
    expect(found.previous).toMatchObject({ source: 'workflow-run', sha: sha(9) })
  })
})

describe('the workflow runs', () => {
  it('find nothing, and say nothing went wrong, on the first run of a workflow', async () => {
    fake().repository.runs = RUNS.slice(-1)
    expect(await find()).toEqual({ runStartedAt: '2026-03-01T10:00:05Z', failures: [], calls: 2 })
  })

  it('need a run id', async () => {
    expect(await find({ runId: 'not-a-number' })).toEqual({ failures: [], calls: 0 })
  })
})

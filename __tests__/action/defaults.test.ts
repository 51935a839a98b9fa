import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { runContextOf } from '../../src/action/run-context.ts'
import type { Env } from '../../src/settings.ts'
import { contextDefaults as defaultsOfRun } from '../../src/action/defaults.ts'
import { describeChange } from '../../src/describe.ts'

const FIXTURES = new URL('../fixtures/payloads/', import.meta.url)

/** A webhook payload as GitHub writes it to GITHUB_EVENT_PATH. */
function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Record<
    string,
    unknown
  >
}

const REPOSITORY = 'octo-org/shop-api'
// The commits the fixtures are about.
const MAIN_HEAD = 'd2c8cd8b80a5fed3756f3bc7dad08a59d76fbef6'
const PR_HEAD = '4109194f70e9edc290cf0f79cba71858b5f3abab'
const PR_MERGE_COMMIT = '3a9da6e824c4bb37edb64345cba4bcda1e542c74'
const FORK_HEAD = '44e11f3f042a3bb71a4462660f9b909fed0d16d1'
const DEPLOYED = 'b68fbebe0ce5d5831b2cf04dde542b6d7cb9ff4d'

/**
 * The defaults of a run of `eventName` with this payload and environment, with the description
 * a change gets from them alone (no lookup); its links and what the lookup reads are left out.
 */
function contextDefaults(eventName: string, payload: unknown, env: Env) {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { eventDescription, metadata, links, runLink, workspace, ...fields } = defaultsOfRun(
    runContextOf({ ...env, GITHUB_EVENT_NAME: eventName }, payload),
    '/work'
  )
  return {
    ...fields,
    description: describeChange({ event: eventDescription }),
    metadata: { [metadata.key]: metadata.fields }
  }
}

/** The variables the runner sets for a run of the given event. */
function runEnv(eventName: string, overrides: Env = {}): Env {
  return {
    GITHUB_EVENT_NAME: eventName,
    GITHUB_REPOSITORY: REPOSITORY,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_SHA: MAIN_HEAD,
    GITHUB_REF: 'refs/heads/main',
    GITHUB_REF_NAME: 'main',
    GITHUB_REF_TYPE: 'branch',
    GITHUB_WORKFLOW: 'Deploy',
    GITHUB_JOB: 'record-change',
    GITHUB_RUN_ID: '13901299999',
    GITHUB_RUN_NUMBER: '77',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_ACTOR: 'monalisa',
    ...overrides
  }
}

describe('contextDefaults on push', () => {
  it('describes the pushed commit and branch, and fills in every run field', () => {
    const defaults = contextDefaults('push', fixture('push'), runEnv('push'))
    expect(defaults).toEqual({
      service: REPOSITORY,
      version: MAIN_HEAD,
      user: 'monalisa',
      branch: 'main',
      description: 'Deploy d2c8cd8 on main of octo-org/shop-api',
      metadata: {
        github: {
          repository: REPOSITORY,
          sha: MAIN_HEAD,
          ref: 'refs/heads/main',
          event_name: 'push',
          workflow: 'Deploy',
          job: 'record-change',
          run_id: '13901299999',
          run_number: '77',
          run_attempt: '1',
          run_url: 'https://github.com/octo-org/shop-api/actions/runs/13901299999/attempts/1',
          actor: 'monalisa'
        }
      },
      // Where the run comes from; GitHub names no job's own id or page.
      pipeline: {
        repositoryUrl: 'https://github.com/octo-org/shop-api',
        provider: 'github',
        ref: { name: 'main', type: 'branch' },
        name: 'Deploy',
        runId: '13901299999',
        runUrl: 'https://github.com/octo-org/shop-api/actions/runs/13901299999/attempts/1',
        task: 'record-change'
      }
    })
    expect('environment' in defaults).toBe(false)
  })

  it("names a tag push's tag, a pull request's head branch and a workflow run's as the run's ref", () => {
    const env = runEnv('push', { GITHUB_REF_NAME: 'v1.2.3', GITHUB_REF_TYPE: 'tag' })
    expect(contextDefaults('push', fixture('push'), env).pipeline?.ref).toEqual({
      name: 'v1.2.3',
      type: 'tag'
    })
    const payload = { pull_request: { number: 7, head: { ref: 'feature/cart' } } }
    const pull = runEnv('pull_request', { GITHUB_REF_NAME: '7/merge', GITHUB_REF_TYPE: 'branch' })
    expect(contextDefaults('pull_request', payload, pull).pipeline?.ref).toEqual({
      name: 'feature/cart',
      type: 'branch'
    })
    const run = { workflow_run: { head_branch: 'release/2', head_sha: MAIN_HEAD } }
    expect(contextDefaults('workflow_run', run, runEnv('workflow_run')).pipeline?.ref).toEqual({
      name: 'release/2',
      type: 'branch'
    })
  })

  it('names no ref at all when the run knows no branch or tag', () => {
    const payload = { pull_request: { number: 7, head: {} } }
    expect(
      contextDefaults('pull_request', payload, runEnv('pull_request')).pipeline
    ).not.toHaveProperty('ref')
  })

  it('names the tag of a tag push', () => {
    const payload = { ...fixture('push'), ref: 'refs/tags/v1.2.3' }
    const env = runEnv('push', {
      GITHUB_REF: 'refs/tags/v1.2.3',
      GITHUB_REF_NAME: 'v1.2.3',
      GITHUB_REF_TYPE: 'tag'
    })
    expect(contextDefaults('push', payload, env).description).toBe(
      'Deploy tag v1.2.3 at d2c8cd8 of octo-org/shop-api'
    )
  })

  it('takes the branch from GITHUB_REF when GITHUB_REF_NAME is not set', () => {
    const env = runEnv('push', {
      GITHUB_REF: 'refs/heads/release/2025-03',
      GITHUB_REF_NAME: undefined,
      GITHUB_REF_TYPE: undefined
    })
    expect(contextDefaults('push', fixture('push'), env).description).toBe(
      'Deploy d2c8cd8 on release/2025-03 of octo-org/shop-api'
    )
  })

  it('takes the ref from the payload when the environment has none', () => {
    const env = runEnv('push', { GITHUB_REF: undefined, GITHUB_REF_NAME: undefined })
    const payload = { ...fixture('push'), ref: 'refs/tags/v2.0.0' }
    expect(contextDefaults('push', payload, env).description).toBe(
      'Deploy tag v2.0.0 at d2c8cd8 of octo-org/shop-api'
    )
  })
})

describe('contextDefaults on pull requests', () => {
  const env = runEnv('pull_request', {
    GITHUB_SHA: PR_MERGE_COMMIT,
    GITHUB_REF: 'refs/pull/42/merge',
    GITHUB_REF_NAME: '42/merge',
    GITHUB_HEAD_REF: 'payment-retry',
    GITHUB_BASE_REF: 'main'
  })

  it('uses the pull request head SHA, not the merge commit GITHUB_SHA', () => {
    const defaults = contextDefaults('pull_request', fixture('pull_request'), env)
    expect(defaults.version).toBe(PR_HEAD)
    expect(defaults.metadata.github!.sha).toBe(PR_HEAD)
    expect(JSON.stringify(defaults)).not.toContain(PR_MERGE_COMMIT)
  })

  it("takes the pull request's head branch, where issue keys and hotfixes are named", () => {
    expect(contextDefaults('pull_request', fixture('pull_request'), env).branch).toBe(
      'payment-retry'
    )
    const tagPush = runEnv('push', {
      GITHUB_REF: 'refs/tags/v1',
      GITHUB_REF_NAME: 'v1',
      GITHUB_REF_TYPE: 'tag'
    })
    expect(contextDefaults('push', fixture('push'), tagPush).branch).toBeUndefined()
  })

  it('names the pull request by number and title, at its head commit', () => {
    const defaults = contextDefaults('pull_request', fixture('pull_request'), env)
    expect(defaults.description).toBe(
      'Pull request #42 "Retry payment capture on 503" at 4109194 of octo-org/shop-api'
    )
    expect(defaults.metadata.github!.pull_request).toBe(42)
    expect(defaults.metadata.github!.ref).toBe('refs/pull/42/merge')
    expect(defaults.environment).toBeUndefined()
  })

  it('keeps the description on one line whatever the title holds', () => {
    const payload = fixture('pull_request')
    const pullRequest = payload['pull_request'] as Record<string, unknown>
    payload['pull_request'] = {
      ...pullRequest,
      title: 'Fix\r\n::error::injected\u0007\ttitle\u2028end\u0000'
    }
    const { description } = contextDefaults('pull_request', payload, env)
    expect(description).toBe(
      'Pull request #42 "Fix ::error::injected title end" at 4109194 of octo-org/shop-api'
    )
    expect(description).not.toMatch(/[\p{Cc}\p{Zl}\p{Zp}]/u)
  })

  it('falls back to GITHUB_SHA when the payload has no head SHA', () => {
    const payload = { number: 42, pull_request: { number: 42, head: { ref: 'payment-retry' } } }
    expect(contextDefaults('pull_request', payload, env).version).toBe(PR_MERGE_COMMIT)
  })

  it('uses the fork head SHA on pull_request_target, not the base branch GITHUB_SHA', () => {
    const targetEnv = runEnv('pull_request_target', {
      GITHUB_SHA: '06eb8d40d8c67a0f54b0389d7d6be172ed99ea9b'
    })
    const defaults = contextDefaults(
      'pull_request_target',
      fixture('pull_request_target'),
      targetEnv
    )
    expect(defaults.version).toBe(FORK_HEAD)
    expect(defaults.metadata.github!.pull_request).toBe(57)
    expect(defaults.description).toBe(
      'Pull request #57 "Fix typo in README" at 44e11f3 of octo-org/shop-api'
    )
  })
})

describe('contextDefaults on deployments', () => {
  it('takes the deployed SHA and environment from a deployment_status event, and its state', () => {
    const defaults = contextDefaults(
      'deployment_status',
      fixture('deployment_status'),
      runEnv('deployment_status', { GITHUB_REF: 'refs/tags/v1.2.3' })
    )
    expect(defaults.version).toBe(DEPLOYED)
    expect(defaults.metadata.github!.sha).toBe(DEPLOYED)
    expect(defaults.environment).toBe('production')
    expect(defaults.description).toBe('Deploy b68fbeb of octo-org/shop-api to production')
    expect(defaults.outcome).toEqual({ outcome: 'success', status: 'success' })
  })

  it.each([
    ['failure', 'failure', 'failed'],
    ['error', 'failure', 'errored'],
    ['in_progress', 'unknown', 'in progress']
  ])('keeps a deployment state of %s as %s, in plain words', (state, outcome, words) => {
    const payload = fixture('deployment_status')
    payload['deployment_status'] = { ...(payload['deployment_status'] as object), state }
    const defaults = contextDefaults('deployment_status', payload, runEnv('deployment_status'))
    expect(defaults.description).toBe(`Deploy b68fbeb of octo-org/shop-api to production ${words}`)
    expect(defaults.outcome).toEqual({ outcome, status: state })
  })

  it('takes the deployed SHA and environment from a deployment event', () => {
    const defaults = contextDefaults('deployment', fixture('deployment'), runEnv('deployment'))
    expect(defaults.version).toBe(DEPLOYED)
    expect(defaults.environment).toBe('production')
    expect(defaults.description).toBe('Deploy b68fbeb of octo-org/shop-api to production')
  })

  it('sends no environment for events that are not deployments', () => {
    const payload = { ...fixture('push'), deployment: { environment: 'production' } }
    expect(contextDefaults('push', payload, runEnv('push')).environment).toBeUndefined()
  })
})

describe('what a run says of how the deploy ended', () => {
  it.each([
    ['success', 'success', ''],
    ['failure', 'failure', ' failed'],
    ['timed_out', 'failure', ' timed out'],
    ['startup_failure', 'failure', ' failed to start'],
    ['cancelled', 'cancelled', ' cancelled'],
    ['neutral', 'unknown', ' neutral']
  ])('reads a workflow run concluded %s as %s', (conclusion, outcome, words) => {
    const payload = fixture('workflow_run')
    payload['workflow_run'] = { ...(payload['workflow_run'] as object), conclusion }
    const defaults = contextDefaults('workflow_run', payload, runEnv('workflow_run'))
    expect(defaults.outcome).toEqual({ outcome, status: conclusion })
    expect(defaults.description.endsWith(`of octo-org/shop-api${words}`)).toBe(true)
  })

  it('says nothing of an outcome for events that carry none', () => {
    expect(contextDefaults('push', fixture('push'), runEnv('push')).outcome).toBeUndefined()
  })
})

describe('a merged pull request', () => {
  const merged = (action: string, isMerged: boolean): Record<string, unknown> => {
    const payload = fixture('pull_request')
    payload['action'] = action
    payload['pull_request'] = { ...(payload['pull_request'] as object), merged: isMerged }
    return payload
  }
  const env = runEnv('pull_request', { GITHUB_SHA: MAIN_HEAD })

  it('records the commit that landed, and says that it merged', () => {
    const defaults = contextDefaults('pull_request', merged('closed', true), env)
    expect(defaults.version).toBe(PR_MERGE_COMMIT)
    expect(defaults.metadata.github.sha).toBe(PR_MERGE_COMMIT)
    expect(defaults.description).toMatch(/^Pull request #\d+ ".*" merged at 3a9da6e of /)
    const target = contextDefaults('pull_request_target', merged('closed', true), env)
    expect(target.version).toBe(PR_MERGE_COMMIT)
  })

  it('keeps the head for a pull request closed unmerged, or any other action', () => {
    expect(contextDefaults('pull_request', merged('closed', false), env).version).toBe(PR_HEAD)
    expect(contextDefaults('pull_request', merged('synchronize', true), env).version).toBe(PR_HEAD)
  })
})

describe('a push that deleted its ref', () => {
  it('is marked as such, and never has the all-zero SHA as its version', () => {
    const payload = { ...fixture('push'), deleted: true, after: '0'.repeat(40) }
    const defaults = contextDefaults(
      'push',
      payload,
      runEnv('push', { GITHUB_SHA: '0'.repeat(40) })
    )
    expect(defaults.deletedRef).toBe(true)
    expect(defaults.version).toBeUndefined()
    expect(contextDefaults('push', fixture('push'), runEnv('push')).deletedRef).toBeUndefined()
  })
})

describe('contextDefaults on other events', () => {
  it('names the release by its tag', () => {
    const defaults = contextDefaults('release', fixture('release'), runEnv('release'))
    expect(defaults.description).toBe('Release v1.2.3 of octo-org/shop-api')
    expect(defaults.version).toBe(MAIN_HEAD)
  })

  it('names the release by its name when it has no tag', () => {
    const payload = { release: { name: 'Spring release', tag_name: '' } }
    expect(contextDefaults('release', payload, runEnv('release')).description).toBe(
      'Release Spring release of octo-org/shop-api'
    )
  })

  it('uses the head SHA and pull request of the workflow run, not the default branch', () => {
    const defaults = contextDefaults(
      'workflow_run',
      fixture('workflow_run'),
      runEnv('workflow_run')
    )
    expect(defaults.version).toBe(PR_HEAD)
    expect(defaults.metadata.github!.pull_request).toBe(42)
    expect(defaults.description).toBe(
      'Workflow "CI" run at 4109194 on payment-retry of octo-org/shop-api'
    )
  })

  it('leaves out the pull request of a workflow run that has none', () => {
    const payload = fixture('workflow_run')
    payload['workflow_run'] = {
      ...(payload['workflow_run'] as object),
      pull_requests: []
    }
    const defaults = contextDefaults('workflow_run', payload, runEnv('workflow_run'))
    expect('pull_request' in defaults.metadata.github!).toBe(false)
  })

  it('describes a scheduled run by its workflow', () => {
    const env = runEnv('schedule', { GITHUB_WORKFLOW: 'Nightly deploy' })
    const defaults = contextDefaults('schedule', fixture('schedule'), env)
    expect(defaults.description).toBe(
      'Scheduled run of Nightly deploy at d2c8cd8 of octo-org/shop-api'
    )
    expect(defaults.version).toBe(MAIN_HEAD)
  })

  it('describes a manual run by its event and workflow', () => {
    const env = runEnv('workflow_dispatch')
    const defaults = contextDefaults('workflow_dispatch', fixture('workflow_dispatch'), env)
    expect(defaults.description).toBe(
      'workflow_dispatch run of Deploy at d2c8cd8 of octo-org/shop-api'
    )
    expect(defaults.metadata.github!.event_name).toBe('workflow_dispatch')
  })
})

describe('contextDefaults with missing or malformed context', () => {
  const EVENTS = [
    'push',
    'pull_request',
    'pull_request_target',
    'deployment',
    'deployment_status',
    'release',
    'workflow_run',
    'schedule',
    'workflow_dispatch',
    'repository_dispatch',
    ''
  ]
  const GARBAGE: unknown[] = [
    null,
    undefined,
    [],
    [{ pull_request: { head: { sha: 'x' } } }],
    'refs/heads/main',
    42,
    true,
    { pull_request: 'not an object' },
    { pull_request: { number: '42', title: { text: 'x' }, head: { sha: 1234567 } } },
    { pull_request: { number: -1, head: null } },
    { deployment: [], deployment_status: { state: 3, environment: ['production'] } },
    { workflow_run: { head_sha: null, name: 7, pull_requests: 'none' } },
    { workflow_run: { pull_requests: [null, { number: 1.5 }] } },
    { release: { tag_name: 7, name: null } },
    { ref: { heads: 'main' } }
  ]

  it.each(EVENTS)('never throws on a garbage %s payload and still describes the change', event => {
    for (const payload of GARBAGE) {
      const defaults = contextDefaults(event, payload, runEnv(event))
      expect(defaults.version).toBe(MAIN_HEAD)
      expect(defaults.description).toMatch(/\S/)
      expect(defaults.description).toContain(REPOSITORY)
      expect('pull_request' in defaults.metadata.github!).toBe(false)
      expect('environment' in defaults).toBe(false)
    }
  })

  it('gives a sentence even when nothing at all is known', () => {
    const defaults = contextDefaults('', {}, {})
    expect(defaults).toEqual({
      description: 'Change recorded by change-tracking-action',
      metadata: { github: {} },
      pipeline: { provider: 'github' }
    })
  })

  it.each(EVENTS)('gives a non-empty description for %s with an empty environment', event => {
    for (const payload of GARBAGE) {
      expect(contextDefaults(event, payload, {}).description).toMatch(/\S/)
    }
  })

  it('treats blank payload strings and variables as missing', () => {
    const payload = { pull_request: { number: 42, title: '   ', head: { sha: '  ' } } }
    const env = runEnv('pull_request', { GITHUB_ACTOR: ' ', GITHUB_JOB: '' })
    const defaults = contextDefaults('pull_request', payload, env)
    expect(defaults.version).toBe(MAIN_HEAD)
    expect(defaults.description).toBe('Pull request #42 at d2c8cd8 of octo-org/shop-api')
    expect('user' in defaults).toBe(false)
    expect('job' in defaults.metadata.github!).toBe(false)
  })

  it('never throws and always gives one non-empty line, for any JSON payload', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EVENTS),
        fc.jsonValue(),
        fc.boolean(),
        (event, payload, withEnv) => {
          const { description } = contextDefaults(event, payload, withEnv ? runEnv(event) : {})
          return /\S/.test(description) && !/[\p{Cc}\p{Zl}\p{Zp}]/u.test(description)
        }
      )
    )
  })
})

describe('run_url', () => {
  it('points at the GitHub Enterprise Server the run is on', () => {
    const env = runEnv('push', {
      GITHUB_SERVER_URL: 'https://github.example-corp.com/',
      GITHUB_RUN_ATTEMPT: '2'
    })
    expect(contextDefaults('push', {}, env).metadata.github!.run_url).toBe(
      'https://github.example-corp.com/octo-org/shop-api/actions/runs/13901299999/attempts/2'
    )
  })

  it('defaults to github.com and leaves out the attempt when it is not known', () => {
    const env = runEnv('push', { GITHUB_SERVER_URL: undefined, GITHUB_RUN_ATTEMPT: undefined })
    expect(contextDefaults('push', {}, env).metadata.github!.run_url).toBe(
      'https://github.com/octo-org/shop-api/actions/runs/13901299999'
    )
  })

  it('is linked in the summary by the run’s number, and its attempt after a re-run', () => {
    const runLink = (env: Env) =>
      defaultsOfRun(runContextOf({ ...env, GITHUB_EVENT_NAME: 'push' }, {}), '/work').runLink
    expect(runLink(runEnv('push', { GITHUB_RUN_ATTEMPT: '2' }))).toEqual({
      text: 'Run 77 attempt 2',
      url: 'https://github.com/octo-org/shop-api/actions/runs/13901299999/attempts/2'
    })
    expect(runLink(runEnv('push'))?.text).toBe('Run 77')
    expect(runLink(runEnv('push', { GITHUB_RUN_NUMBER: undefined }))?.text).toBe('Run 13901299999')
  })

  it('is left out when the repository or the run id is not known', () => {
    const withoutRunId = contextDefaults('push', {}, runEnv('push', { GITHUB_RUN_ID: undefined }))
    const withoutRepository = contextDefaults(
      'push',
      {},
      runEnv('push', { GITHUB_REPOSITORY: undefined })
    )
    expect('run_url' in withoutRunId.metadata.github!).toBe(false)
    expect('run_url' in withoutRepository.metadata.github!).toBe(false)
    expect(withoutRepository.metadata.github!.run_id).toBe('13901299999')
  })
})

describe('the fallback description', () => {
  it('obeys the same 200-character bound as a looked-up one, whatever the payload holds', () => {
    const payload = { deployment: { sha: MAIN_HEAD, environment: 'e'.repeat(100_000) } }
    const defaults = contextDefaults('deployment', payload, runEnv('deployment'))
    expect(Array.from(defaults.description).length).toBeLessThanOrEqual(200)
    expect(defaults.description).toMatch(/^Deploy d2c8cd8 of octo-org\/shop-api to e+…$/)
  })
})

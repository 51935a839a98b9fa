import { describe, expect, it } from '@jest/globals'
import {
  buildChangeRequest,
  overruledOutcome,
  type ChangeBasis,
  type RunDefaults
} from '../src/change.ts'
import type { DeployRecord } from '../src/deploy.ts'

const GITHUB = {
  repository: 'octo-org/shop-api',
  sha: 'd2c8cd8b80a5fed3756f3bc7dad08a59d76fbef6',
  event_name: 'push',
  run_id: '13901299999',
  run_url: 'https://github.com/octo-org/shop-api/actions/runs/13901299999'
}

const DEFAULTS: RunDefaults = {
  service: 'octo-org/shop-api',
  version: 'd2c8cd8b80a5fed3756f3bc7dad08a59d76fbef6',
  user: 'monalisa',
  environment: 'production',
  eventDescription: 'Deploy d2c8cd8 on main of octo-org/shop-api',
  metadata: { key: 'github', fields: GITHUB },
  workspace: '/work'
}
const BASIS: ChangeBasis = { run: DEFAULTS }
const STARTED = Date.parse('2026-11-23T10:00:00.400Z')
const FAILED: DeployRecord = {
  outcome: 'failure',
  status: 'failure',
  startedAt: STARTED,
  finishedAt: STARTED + 30_000
}

/** Without the action's labels, so that each test sees the fields it is about. */
const PLAIN = { githubMetadata: false, otelAttributes: false, triage: { autoLabels: false } }
const WITH_GITHUB = { githubMetadata: true, otelAttributes: false, triage: { autoLabels: false } }

describe('buildChangeRequest', () => {
  it('takes every field the user left empty from the context', () => {
    const request = buildChangeRequest({}, BASIS, PLAIN)
    expect(JSON.stringify(request)).toBe(
      JSON.stringify({
        description: 'Deploy d2c8cd8 on main of octo-org/shop-api',
        environment: 'production',
        service: 'octo-org/shop-api',
        version: 'd2c8cd8b80a5fed3756f3bc7dad08a59d76fbef6',
        user: 'monalisa'
      })
    )
  })

  it('names the service given in the description, not the repository or the folder', () => {
    const folder = {
      ...BASIS,
      run: { ...DEFAULTS, service: 'deploy-prod@2', eventDescription: undefined }
    }
    expect(
      buildChangeRequest({ service: 'payments', version: '2.3.0' }, folder, PLAIN).description
    ).toBe('Deploy payments 2.3.0 to production')
    // The event's own words stay, after the service they are about.
    expect(buildChangeRequest({ service: 'payments' }, BASIS, PLAIN).description).toBe(
      'payments: Deploy d2c8cd8 on main of octo-org/shop-api'
    )
  })

  it("prefers the user's fields over the context's", () => {
    const request = buildChangeRequest(
      {
        description: 'Flip checkout-v2 flag',
        environment: 'staging',
        service: 'checkout',
        version: '2025.03.14-1',
        user: 'release-bot',
        comment: 'Canary first',
        team: 'payments'
      },
      BASIS,
      PLAIN
    )
    expect(request).toEqual({
      description: 'Flip checkout-v2 flag',
      environment: 'staging',
      service: 'checkout',
      version: '2025.03.14-1',
      user: 'release-bot',
      comment: 'Canary first',
      team: 'payments'
    })
  })

  it('uses the default description when the user gave a blank one', () => {
    expect(buildChangeRequest({ description: '  ' }, BASIS, PLAIN).description).toBe(
      DEFAULTS.eventDescription
    )
  })

  it('joins labels with commas', () => {
    const request = buildChangeRequest(
      { labels: ['team:payments', 'deploy', 'canary'] },
      BASIS,
      PLAIN
    )
    expect(request.labels).toBe('team:payments,deploy,canary')
  })

  it('leaves out every optional field that ends up empty, rather than sending it undefined', () => {
    const request = buildChangeRequest(
      { environment: '', service: '', comment: '', team: undefined, labels: [] },
      { run: { service: '', metadata: { key: 'github', fields: {} }, workspace: '/work' } },
      PLAIN
    )
    expect(JSON.stringify(request)).toBe(
      '{"description":"Change recorded by change-tracking-action"}'
    )
    expect(Object.keys(request)).toEqual(['description'])
  })

  it('passes created_at through as given', () => {
    expect(buildChangeRequest({ createdAt: 1710410000 }, BASIS, PLAIN).created_at).toBe(1710410000)
    expect('created_at' in buildChangeRequest({}, BASIS, PLAIN)).toBe(false)
  })

  it('sends a unicode description byte for byte, unnormalised', () => {
    // "é" decomposed (e + combining acute), an emoji with a zero-width joiner, CJK, and an RTL word.
    const description = 'De\u0301ploiement 👩‍🚀 東京 — שלום'
    const request = buildChangeRequest({ description }, BASIS, PLAIN)
    const sent = (JSON.parse(JSON.stringify(request)) as { description: string }).description
    expect(Buffer.from(sent, 'utf8').equals(Buffer.from(description, 'utf8'))).toBe(true)
  })
})

describe('buildChangeRequest custom_metadata', () => {
  it('carries the GitHub metadata when the user gave none', () => {
    const request = buildChangeRequest({}, BASIS, WITH_GITHUB)
    expect(request.custom_metadata).toBe(JSON.stringify({ github: GITHUB }))
  })

  it("merges the user's object over the GitHub metadata, the user's keys winning", () => {
    const request = buildChangeRequest(
      { customMetadata: { ticket: 'OPS-1234', github: 'mine', rollout: { percent: 10 } } },
      BASIS,
      WITH_GITHUB
    )
    expect(JSON.parse(request.custom_metadata ?? '')).toEqual({
      github: 'mine',
      ticket: 'OPS-1234',
      rollout: { percent: 10 }
    })
  })

  it("keeps the GitHub metadata next to the user's other keys", () => {
    const request = buildChangeRequest(
      { customMetadata: { ticket: 'OPS-1234' } },
      BASIS,
      WITH_GITHUB
    )
    expect(request.custom_metadata).toBe(JSON.stringify({ github: GITHUB, ticket: 'OPS-1234' }))
  })

  it('keeps a user key named __proto__ as a plain key', () => {
    const customMetadata: unknown = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}')
    const request = buildChangeRequest({ customMetadata }, BASIS, WITH_GITHUB)
    expect(request.custom_metadata).toBe(
      `{"github":${JSON.stringify(GITHUB)},"__proto__":{"polluted":true},"a":1}`
    )
    expect(JSON.parse(request.custom_metadata ?? '')).toHaveProperty(
      ['__proto__', 'polluted'],
      true
    )
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
  })

  it.each([
    ['an array', ['a', 'b']],
    ['a string', 'release notes'],
    ['a number', 7],
    ['true', true],
    ['null', null]
  ])('sends %s unchanged, without the GitHub metadata', (_kind, value) => {
    const request = buildChangeRequest({ customMetadata: value }, BASIS, WITH_GITHUB)
    expect(request.custom_metadata).toBe(JSON.stringify(value))
  })

  it("sends only the user's value when github-metadata is false", () => {
    const request = buildChangeRequest({ customMetadata: { ticket: 'OPS-1234' } }, BASIS, PLAIN)
    expect(request.custom_metadata).toBe('{"ticket":"OPS-1234"}')
  })

  it('is left out when github-metadata is false and the user gave none', () => {
    expect('custom_metadata' in buildChangeRequest({}, BASIS, PLAIN)).toBe(false)
  })

  it('keeps the deploy key when github-metadata is false, under the user keys', () => {
    const basis = { ...BASIS, deploy: FAILED }
    expect(JSON.parse(buildChangeRequest({}, basis, PLAIN).custom_metadata ?? '')).toEqual({
      deploy: {
        outcome: 'failure',
        status: 'failure',
        started_at: '2026-11-23T10:00:00.400Z',
        finished_at: '2026-11-23T10:00:30.400Z',
        duration_seconds: 30
      }
    })
    expect(
      buildChangeRequest({ customMetadata: { deploy: 'mine' } }, basis, WITH_GITHUB).custom_metadata
    ).toBe(JSON.stringify({ github: GITHUB, deploy: 'mine' }))
  })
})

describe('buildChangeRequest at a job’s end', () => {
  it('is created at the deploy’s start and says how it ended; the user’s values still win', () => {
    const change = buildChangeRequest({}, { ...BASIS, deploy: FAILED }, WITH_GITHUB)
    expect(change.created_at).toBe(Math.floor(STARTED / 1000))
    expect(change.description).toBe('Deploy d2c8cd8 on main of octo-org/shop-api failed after 30 s')
    expect(JSON.parse(change.custom_metadata ?? '')).toMatchObject({
      github: GITHUB,
      deploy: { outcome: 'failure' }
    })
    const mine = buildChangeRequest(
      { description: 'Mine', createdAt: 5 },
      { ...BASIS, deploy: FAILED },
      WITH_GITHUB
    )
    expect(mine.description).toBe('Mine')
    expect(mine.created_at).toBe(5)
  })
})

describe('buildChangeRequest: one outcome, and a lead time only for what shipped', () => {
  const commits = [{ sha: 'a'.repeat(40), message: 'x', committedAt: '2026-11-23T09:00:00Z' }]
  const shipped = {
    commits,
    messages: [],
    pullRequests: [],
    pullRequestCount: 0,
    pullRequestsComplete: true,
    rollback: false,
    changedFilesComplete: false,
    apiCalls: 0
  }
  const metadata = (basis: ChangeBasis): Record<string, Record<string, unknown>> =>
    JSON.parse(buildChangeRequest({}, basis, WITH_GITHUB).custom_metadata ?? '{}')

  it('takes the outcome from the event when no job status tells it', () => {
    const run = { ...DEFAULTS, outcome: { outcome: 'failure' as const, status: 'error' } }
    expect(metadata({ run }).deploy).toEqual({ outcome: 'failure', status: 'error' })
    expect(metadata({ run, deploy: FAILED }).deploy.status).toBe('failure')
  })

  it.each([
    ['a success at the job’s end', { deploy: { ...FAILED, outcome: 'success' as const } }, true],
    ['an unknown outcome outside the job’s end', {}, true],
    ['a failure', { deploy: FAILED }, false],
    ['a cancel', { deploy: { ...FAILED, outcome: 'cancelled' as const } }, false],
    [
      'an unknown outcome at the job’s end',
      { deploy: { ...FAILED, outcome: 'unknown' as const } },
      false
    ],
    [
      'a failed deployment',
      { run: { ...DEFAULTS, outcome: { outcome: 'failure' as const, status: 'failure' } } },
      false
    ]
  ])('%s: lead time sent %s', (_what, extra, sent) => {
    const basis: ChangeBasis = { ...BASIS, shipped, recordedAt: STARTED, ...extra }
    expect('lead_time_seconds' in metadata(basis).github).toBe(sent)
  })
})

describe('buildChangeRequest: the description', () => {
  it("keeps the event's words only when they name the version sent", () => {
    expect(buildChangeRequest({}, BASIS, PLAIN).description).toBe(DEFAULTS.eventDescription)
    expect(buildChangeRequest({ version: 'v2.3.0' }, BASIS, PLAIN).description).toBe(
      'Deploy octo-org/shop-api v2.3.0 to production'
    )
  })
})

describe('buildChangeRequest: triage', () => {
  const SHA = '9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c'
  const triage = {
    issues: ['ENG-142', 'OPS-7'],
    closes: ['#88'],
    risk: { migration: ['db/migrate/1.rb'], ci: ['.github/workflows/deploy.yml'] },
    riskComplete: true,
    remediation: { type: 'revert' as const, reverts: [SHA] }
  }
  const LABELS = { githubMetadata: true, otelAttributes: false, triage: { autoLabels: true } }
  const failed: ChangeBasis = { ...BASIS, deploy: FAILED, triage }

  it("adds the action's labels after the user's, in order, each once", () => {
    const change = buildChangeRequest({ labels: ['team:shop', 'risk:ci'] }, failed, LABELS)
    expect(change.labels).toBe(
      'team:shop,risk:ci,outcome:failure,remediation:revert,risk:migration,issue:ENG-142,issue:OPS-7'
    )
  })

  it('adds no outcome label when the outcome is unknown, and none at all with auto-labels false', () => {
    expect(buildChangeRequest({}, { ...BASIS, triage }, LABELS).labels).not.toContain('outcome:')
    const off = buildChangeRequest({ labels: ['team:shop'] }, failed, WITH_GITHUB)
    expect(off.labels).toBe('team:shop')
    // The metadata is still sent.
    expect(JSON.parse(off.custom_metadata ?? '')).toMatchObject({
      github: { issues: triage.issues, closes: triage.closes, risk: triage.risk },
      remediation: triage.remediation
    })
  })

  it('sends issues, closes and risk under github, and remediation beside it', () => {
    const metadata = JSON.parse(buildChangeRequest({}, failed, LABELS).custom_metadata ?? '')
    expect(metadata).toEqual({
      github: {
        ...GITHUB,
        issues: triage.issues,
        closes: triage.closes,
        risk: triage.risk,
        risk_complete: true
      },
      deploy: expect.objectContaining({ outcome: 'failure' }),
      remediation: { type: 'revert', reverts: [SHA] }
    })
  })

  it('keeps the remediation when the github metadata is turned off', () => {
    const metadata = JSON.parse(
      buildChangeRequest({}, failed, {
        githubMetadata: false,
        otelAttributes: false,
        triage: { autoLabels: true }
      }).custom_metadata ?? ''
    )
    expect(metadata).toEqual({
      deploy: expect.objectContaining({ outcome: 'failure' }),
      remediation: triage.remediation
    })
  })
})

describe('buildChangeRequest: what shipped under its own key', () => {
  const CI = { provider: 'gitlab', build_url: 'https://gitlab.example.com/acme/shop/-/pipelines/7' }
  const run: RunDefaults = { ...DEFAULTS, metadata: { key: 'ci', fields: CI, shippedKey: 'git' } }
  const shipped = {
    readFrom: 'git' as const,
    previousSha: 'b'.repeat(40),
    source: 'previous-tag' as const,
    commitCount: 1,
    commits: [{ sha: 'a'.repeat(40), message: 'Add login', committedAt: '2026-11-23T09:00:00Z' }],
    messages: ['Add login'],
    pullRequests: [],
    pullRequestCount: 0,
    pullRequestsComplete: true,
    rollback: false,
    changedFilesComplete: true,
    apiCalls: 0
  }
  const triage = { riskComplete: true, issues: ['ENG-1'] }
  const metadataOf = (basis: ChangeBasis, options = WITH_GITHUB) =>
    JSON.parse(buildChangeRequest({}, basis, options).custom_metadata ?? '{}')

  it("keeps the CI's fields under its key, and what shipped under the door's, with its source", () => {
    const recordedAt = Date.parse('2026-11-23T10:00:00Z')
    expect(metadataOf({ run, shipped, triage, recordedAt })).toEqual({
      ci: CI,
      git: {
        source: 'git',
        previous_sha: 'b'.repeat(40),
        commit_count: 1,
        commits: [{ sha: 'a'.repeat(40), message: 'Add login' }],
        risk_complete: true,
        issues: ['ENG-1'],
        lead_time_seconds: { median: 3600, max: 3600, commits: 1, dropped: 0 }
      }
    })
  })

  it('adds no key for what shipped when nothing was found, and neither key when turned off', () => {
    expect(metadataOf({ run })).toEqual({ ci: CI })
    expect(metadataOf({ run, shipped, triage }, PLAIN)).toEqual({})
  })

  it('keeps what shipped under the run’s own key without one (the action, include-commits: git)', () => {
    expect(metadataOf({ run: DEFAULTS, shipped })).toEqual({
      github: expect.objectContaining({ ...GITHUB, source: 'git', commit_count: 1 })
    })
  })
})

describe('buildChangeRequest: the outcome the action knows wins over the user’s', () => {
  const LABELS = { githubMetadata: false, otelAttributes: false, triage: { autoLabels: true } }
  const claimsSuccess = {
    labels: ['team:shop', 'outcome:success'],
    customMetadata: { deploy: { outcome: 'success', ticket: 'OPS-1' }, note: 'mine' }
  }
  const failedDeployment = {
    run: { ...DEFAULTS, outcome: { outcome: 'failure' as const, status: 'error' } }
  }

  it('keeps a failed deploy’s outcome in the labels and the deploy metadata, and the user’s other keys', () => {
    const change = buildChangeRequest(claimsSuccess, { ...BASIS, deploy: FAILED }, LABELS)
    expect(change.labels).toBe('team:shop,outcome:failure')
    expect(JSON.parse(change.custom_metadata ?? '')).toEqual({
      deploy: {
        outcome: 'failure',
        status: 'failure',
        started_at: '2026-11-23T10:00:00.400Z',
        finished_at: '2026-11-23T10:00:30.400Z',
        duration_seconds: 30,
        ticket: 'OPS-1'
      },
      note: 'mine'
    })
  })

  it.each([
    ['a cancelled job', { deploy: { ...FAILED, outcome: 'cancelled' as const } }, 'cancelled'],
    ['a failed deployment event', failedDeployment, 'failure']
  ])('keeps the outcome of %s too, even with auto-labels false', (_what, extra, outcome) => {
    const change = buildChangeRequest(claimsSuccess, { ...BASIS, ...extra }, PLAIN)
    expect(change.labels).toBe('team:shop')
    expect(JSON.parse(change.custom_metadata ?? '').deploy).toMatchObject({
      outcome,
      ticket: 'OPS-1'
    })
  })

  it('drops a contradicting outcome label in any letter case, and keeps one that agrees', () => {
    const labels = ['Outcome: Success', 'outcome:FAILURE']
    const change = buildChangeRequest({ labels }, { ...BASIS, deploy: FAILED }, LABELS)
    expect(change.labels).toBe('outcome:FAILURE,outcome:failure')
  })

  it('leaves the user’s outcome alone when the action does not know it', () => {
    const unknown = { ...BASIS, deploy: { ...FAILED, outcome: 'unknown' as const } }
    const change = buildChangeRequest(claimsSuccess, unknown, LABELS)
    expect(change.labels).toBe('team:shop,outcome:success')
    expect(JSON.parse(change.custom_metadata ?? '').deploy).toEqual(
      claimsSuccess.customMetadata.deploy
    )
    expect(overruledOutcome(claimsSuccess, unknown)).toBeUndefined()
  })

  it('says in one warning what the user claimed and which outcome was kept', () => {
    expect(overruledOutcome(claimsSuccess, { ...BASIS, deploy: FAILED })).toBe(
      'The deploy ended with failure, so the change keeps outcome failure: the label "outcome:success" was dropped; custom-metadata\'s deploy.outcome "success" was replaced.'
    )
    const agrees = {
      labels: ['outcome:failure'],
      customMetadata: { deploy: { outcome: 'failure' } }
    }
    expect(overruledOutcome(agrees, failedDeployment)).toBeUndefined()
  })
})

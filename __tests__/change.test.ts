import { describe, expect, it } from '@jest/globals'
import { buildChangeRequest } from '../src/change.ts'
import type { ChangeDefaults } from '../src/change.ts'

const GITHUB = {
  repository: 'octo-org/shop-api',
  sha: 'd2c8cd8b80a5fed3756f3bc7dad08a59d76fbef6',
  event_name: 'push',
  run_id: '13901299999',
  run_url: 'https://github.com/octo-org/shop-api/actions/runs/13901299999'
}

const DEFAULTS: ChangeDefaults = {
  service: 'octo-org/shop-api',
  version: 'd2c8cd8b80a5fed3756f3bc7dad08a59d76fbef6',
  user: 'monalisa',
  environment: 'production',
  description: 'Deploy d2c8cd8 on main of octo-org/shop-api',
  metadata: { github: GITHUB }
}

describe('buildChangeRequest', () => {
  it('takes every field the user left empty from the context', () => {
    const request = buildChangeRequest({}, DEFAULTS, false)
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
      DEFAULTS,
      false
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
    expect(buildChangeRequest({ description: '  ' }, DEFAULTS, false).description).toBe(
      DEFAULTS.description
    )
  })

  it('joins labels with commas', () => {
    const request = buildChangeRequest(
      { labels: ['team:payments', 'deploy', 'canary'] },
      DEFAULTS,
      false
    )
    expect(request.labels).toBe('team:payments,deploy,canary')
  })

  it('leaves out every optional field that ends up empty, rather than sending it undefined', () => {
    const emptyDefaults: ChangeDefaults = {
      service: '',
      description: 'Change recorded by change-tracking-action',
      metadata: {}
    }
    const request = buildChangeRequest(
      { environment: '', service: '', comment: '', team: undefined, labels: [] },
      emptyDefaults,
      false
    )
    expect(JSON.stringify(request)).toBe(
      '{"description":"Change recorded by change-tracking-action"}'
    )
    expect(Object.keys(request)).toEqual(['description'])
  })

  it('passes created_at through as given', () => {
    expect(buildChangeRequest({ createdAt: 1710410000 }, DEFAULTS, false).created_at).toBe(
      1710410000
    )
    expect('created_at' in buildChangeRequest({}, DEFAULTS, false)).toBe(false)
  })

  it('sends a unicode description byte for byte, unnormalised', () => {
    // "é" decomposed (e + combining acute), an emoji with a zero-width joiner, CJK, and an RTL word.
    const description = 'De\u0301ploiement 👩‍🚀 東京 — שלום'
    const request = buildChangeRequest({ description }, DEFAULTS, false)
    const sent = (JSON.parse(JSON.stringify(request)) as { description: string }).description
    expect(Buffer.from(sent, 'utf8').equals(Buffer.from(description, 'utf8'))).toBe(true)
  })
})

describe('buildChangeRequest custom_metadata', () => {
  it('carries the GitHub metadata when the user gave none', () => {
    const request = buildChangeRequest({}, DEFAULTS, true)
    expect(request.custom_metadata).toBe(JSON.stringify({ github: GITHUB }))
  })

  it("merges the user's object over the GitHub metadata, the user's keys winning", () => {
    const request = buildChangeRequest(
      { customMetadata: { ticket: 'OPS-1234', github: 'mine', rollout: { percent: 10 } } },
      DEFAULTS,
      true
    )
    expect(JSON.parse(request.custom_metadata ?? '')).toEqual({
      github: 'mine',
      ticket: 'OPS-1234',
      rollout: { percent: 10 }
    })
  })

  it("keeps the GitHub metadata next to the user's other keys", () => {
    const request = buildChangeRequest({ customMetadata: { ticket: 'OPS-1234' } }, DEFAULTS, true)
    expect(request.custom_metadata).toBe(JSON.stringify({ github: GITHUB, ticket: 'OPS-1234' }))
  })

  it('keeps a user key named __proto__ as a plain key', () => {
    const customMetadata: unknown = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}')
    const request = buildChangeRequest({ customMetadata }, DEFAULTS, true)
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
    const request = buildChangeRequest({ customMetadata: value }, DEFAULTS, true)
    expect(request.custom_metadata).toBe(JSON.stringify(value))
  })

  it("sends only the user's value when github-metadata is false", () => {
    const request = buildChangeRequest({ customMetadata: { ticket: 'OPS-1234' } }, DEFAULTS, false)
    expect(request.custom_metadata).toBe('{"ticket":"OPS-1234"}')
  })

  it('is left out when github-metadata is false and the user gave none', () => {
    expect('custom_metadata' in buildChangeRequest({}, DEFAULTS, false)).toBe(false)
  })

  it('keeps the other default keys when github-metadata is false, under the user keys', () => {
    const defaults = { ...DEFAULTS, metadata: { github: GITHUB, deploy: { outcome: 'success' } } }
    expect(buildChangeRequest({}, defaults, false).custom_metadata).toBe(
      '{"deploy":{"outcome":"success"}}'
    )
    expect(
      buildChangeRequest({ customMetadata: { deploy: 'mine' } }, defaults, true).custom_metadata
    ).toBe(JSON.stringify({ github: GITHUB, deploy: 'mine' }))
  })

  it('takes created_at from the defaults unless the user gave created-at', () => {
    const defaults = { ...DEFAULTS, createdAt: 1_700_000_000 }
    expect(buildChangeRequest({}, defaults, false).created_at).toBe(1_700_000_000)
    expect(buildChangeRequest({ createdAt: 1_600_000_000 }, defaults, false).created_at).toBe(
      1_600_000_000
    )
  })
})

import { describe, expect, it } from '@jest/globals'
import {
  environmentClaim,
  environmentName,
  readJobEnvironment
} from '../../src/action/job-environment.ts'
import { Redactor } from '../../src/redact.ts'
import { FakeRunner } from '../support/fake-runner.ts'
import { jwtWith } from '../support/jwt.ts'

const base64url = (text: string): string => Buffer.from(text).toString('base64url')

describe('the environment claim of a token', () => {
  it('is read from the payload, the base64url middle part', () => {
    expect(
      environmentClaim(
        jwtWith({ sub: 'repo:o/r:environment:production', environment: 'production' })
      )
    ).toBe('production')
    expect(environmentClaim(jwtWith({ environment: 'Prod – EU 🇪🇺' }))).toBe('Prod – EU 🇪🇺')
  })

  it.each([
    ['no claim', jwtWith({ sub: 'repo:o/r:ref:refs/heads/main' })],
    ['an empty token', ''],
    ['one part', base64url('{"environment":"production"}')],
    ['two parts', `x.${base64url('{"environment":"production"}')}`],
    ['four parts', `x.${base64url('{"environment":"production"}')}.y.z`],
    ['a payload that is not JSON', `x.${base64url('{"environment":')}.y`],
    ['a payload that is not base64url', 'x.@@@.y'],
    ['a payload that is null', `x.${base64url('null')}.y`],
    ['a payload that is a string', `x.${base64url('"production"')}.y`]
  ])('is none in %s', (_, token) => {
    expect(environmentClaim(token)).toBeUndefined()
  })

  it.each([
    ['a number', 7],
    ['an object', { name: 'production' }],
    ['an empty string', ''],
    ['blank', '   '],
    ['256 characters', 'e'.repeat(256)],
    ['a line break', 'production\n::error::injected'],
    ['an escape sequence', 'prod\u001b[2J'],
    ['a bidi override', 'prod\u202euction']
  ])('is none when it is %s', (_, value) => {
    expect(environmentClaim(jwtWith({ environment: value }))).toBeUndefined()
  })

  it('may be as long as GitHub allows an environment’s name', () => {
    expect(environmentName('e'.repeat(255))).toBe('e'.repeat(255))
  })
})

describe('reading the job’s environment', () => {
  const token = jwtWith({ environment: 'production' })
  const endpoint = { url: 'https://token.example/?api-version=2.0', requestToken: 'request-token' }

  it('asks for a token for the audience, masks it and names the environment', async () => {
    const runner = new FakeRunner()
    runner.idToken = async () => token
    const redactor = new Redactor()
    expect(await readJobEnvironment(runner, redactor, endpoint, 'change-tracking-action')).toEqual({
      environment: 'production'
    })
    expect(runner.tokenRequests).toEqual([{ ...endpoint, audience: 'change-tracking-action' }])
    expect(runner.secrets).toEqual([token])
    expect(redactor.redact(`token ${token}`)).toBe('token ***')
  })

  it('masks a token whose claim it cannot use, and says so', async () => {
    const unusable = jwtWith({ environment: 'x'.repeat(300) })
    const runner = new FakeRunner()
    runner.idToken = async () => unusable
    const found = await readJobEnvironment(runner, new Redactor(), endpoint, 'a')
    expect(found).toEqual({ problem: 'the token has no usable environment claim' })
    expect(runner.secrets).toEqual([unusable])
  })

  it('gives the endpoint’s reason when there is no token, and masks nothing', async () => {
    const runner = new FakeRunner()
    const found = await readJobEnvironment(runner, new Redactor(), endpoint, 'a')
    expect(found).toEqual({ problem: 'the token endpoint answered HTTP 403' })
    expect(runner.secrets).toEqual([])
  })

  it('gives up when its budget runs out, aborting the request it waited for', async () => {
    const runner = new FakeRunner()
    let request: AbortSignal | undefined
    runner.idToken = signal => {
      request = signal
      return new Promise(() => undefined)
    }
    // The bundle's own 2 s budget is proven end to end (e2e/job-environment.test.ts).
    const found = await readJobEnvironment(runner, new Redactor(), endpoint, 'a', 50)
    expect(found).toEqual({ problem: 'no token came in time' })
    expect(request?.aborted).toBe(true)
    expect(runner.secrets).toEqual([])
  })
})

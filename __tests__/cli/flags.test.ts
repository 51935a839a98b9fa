/** The command line's flags: each setting from its flag, else its variable, else its default. */
import { afterEach, describe, expect, it } from '@jest/globals'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildProgram, UsageError, type Invocation } from '../../src/cli/flags.ts'

const quiet = { writeOut: () => {}, writeErr: () => {} }
const set: string[] = []

/** The command line `args` read with these variables (commander reads them from process.env). */
function parse(args: string[], env: Record<string, string> = {}): Invocation {
  for (const [name, value] of Object.entries(env)) {
    process.env[name] = value
    set.push(name)
  }
  let found: Invocation | undefined
  buildProgram('1.2.3', quiet, env, invocation => (found = invocation)).parse(args, {
    from: 'user'
  })
  return found!
}
afterEach(() => {
  for (const name of set.splice(0)) delete process.env[name]
})

describe('flags', () => {
  it.each([
    [['change'], 'false'],
    [['change', '--dry-run'], 'true'],
    [['change', '--dry-run=false'], 'false'],
    [['change', '--dry-run', 'false'], 'false'],
    [['change', '--dry-run', 'true'], 'true']
  ])('read %j as dry-run %s: a boolean flag alone means true', (args, value) => {
    expect(parse(args).getInput('dry-run')).toBe(value)
  })

  it('take a value from its CHANGE_TRACKING_ variable, and a flag wins over it, each named as given', () => {
    const fromVariable = parse(['change'], { CHANGE_TRACKING_ENVIRONMENT: 'staging' })
    expect(fromVariable.getInput('environment')).toBe('staging')
    expect(fromVariable.nameOf('environment')).toBe('CHANGE_TRACKING_ENVIRONMENT')
    const fromFlag = parse(['change', '--environment', 'prod'], {
      CHANGE_TRACKING_ENVIRONMENT: 'staging'
    })
    expect(fromFlag.getInput('environment')).toBe('prod')
    expect(fromFlag.nameOf('environment')).toBe('--environment')
  })

  it('show their default, and leave a setting the command does not take empty', () => {
    const hello = parse(['hello'])
    expect(hello.getInput('timeout-seconds')).toBe('30')
    expect(hello.getInput('labels')).toBe('')
    expect(hello.getInput('include-commits')).toBe('')
    expect(hello.getInput('command')).toBe('hello')
  })

  it('read `change --version` as the change’s version, not the tool’s', () => {
    expect(parse(['change', '--version', 'v1.2.3']).getInput('version')).toBe('v1.2.3')
  })

  it('keep the deploy command after --, with its own flags, and record it as a change', () => {
    const run = parse(['run', '--labels', 'web', '--', './deploy.sh', '--prod', '-v'])
    expect(run.deploy).toEqual(['./deploy.sh', '--prod', '-v'])
    expect(run.getInput('command')).toBe('change')
    expect(run.getInput('labels')).toBe('web')
  })
})

describe('the API key', () => {
  it('comes from CHANGE_TRACKING_API_KEY, or from --api-key-file without its final line break', () => {
    expect(parse(['hello'], { CHANGE_TRACKING_API_KEY: 'k-env' }).getInput('api-key')).toBe('k-env')
    const file = join(mkdtempSync(join(tmpdir(), 'cta-key-')), 'key')
    writeFileSync(file, 'k-file\n')
    expect(parse(['hello', '--api-key-file', file]).getInput('api-key')).toBe('k-file')
  })

  it('never comes from a flag: refused, saying why, without quoting it', () => {
    let refusal: unknown
    try {
      parse(['change', '--api-key', 'sk_live_secret'])
    } catch (error) {
      refusal = error
    }
    expect(refusal).toBeInstanceOf(UsageError)
    expect((refusal as Error).message).toContain('process listings and shell history')
    expect((refusal as Error).message).not.toContain('sk_live_secret')
  })
})

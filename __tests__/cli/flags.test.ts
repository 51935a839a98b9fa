/** The command line's flags: each setting from its flag, else its variable, else its default. */
import { describe, expect, it } from '@jest/globals'
import { CommanderError } from 'commander'
import {
  buildProgram,
  parseCommandLine,
  sensitiveValues,
  type Invocation
} from '../../src/cli/flags.ts'
import { Redactor } from '../../src/redact.ts'

const quiet = { writeOut: () => {}, writeErr: () => {} }

/** The command line `args` read with these variables, which only the env given holds. */
function parse(args: string[], env: Record<string, string> = {}): Invocation {
  return parseCommandLine(args, env, quiet, '1.2.3')!
}

/** What refusing `args` threw. */
function refusal(args: string[]): Error {
  try {
    parse(args)
  } catch (error) {
    return error as Error
  }
  throw new Error(`${args.join(' ')} was not refused`)
}

describe('flags', () => {
  it.each([
    [['change'], 'false'],
    [['change', '--dry-run'], 'true'],
    [['change', '--dry-run=false'], 'false'],
    [['change', '--dry-run', 'false'], 'false'],
    [['change', '--dry-run', 'true'], 'true']
  ])('read %j as dry-run %s: a boolean flag alone means true', (args, value) => {
    expect(parse(args).inputs['dry-run']).toBe(value)
  })

  it('take a value from its CHANGE_TRACKING_ variable, and a flag wins over it, each named as given', () => {
    const fromVariable = parse(['change'], { CHANGE_TRACKING_ENVIRONMENT: 'staging' })
    expect(fromVariable.inputs['environment']).toBe('staging')
    expect(fromVariable.inputNames['environment']).toBe('CHANGE_TRACKING_ENVIRONMENT')
    const fromFlag = parse(['change', '--environment', 'prod'], {
      CHANGE_TRACKING_ENVIRONMENT: 'staging'
    })
    expect(fromFlag.inputs['environment']).toBe('prod')
    expect(fromFlag.inputNames['environment']).toBe('--environment')
  })

  it('read each variable from the env given, never from the process', () => {
    process.env['CHANGE_TRACKING_SERVICE'] = 'from-the-process'
    try {
      const invocation = parse(['change'], { CHANGE_TRACKING_ENVIRONMENT: 'staging' })
      expect(invocation.inputs['environment']).toBe('staging')
      expect(invocation.inputs['service']).toBe('')
    } finally {
      delete process.env['CHANGE_TRACKING_SERVICE']
    }
  })

  it('read an empty variable as its default, as an empty action input is', () => {
    const invocation = parse(['change'], { CHANGE_TRACKING_TIMEOUT_SECONDS: '' })
    expect(invocation.inputs['timeout-seconds']).toBe('30')
    expect(invocation.inputNames['timeout-seconds']).toBe('--timeout-seconds')
  })

  it('name each variable in the help', () => {
    const program = buildProgram('1.2.3', quiet, {})
    const change = program.commands.find(command => command.name() === 'change')!
    expect(change.helpInformation()).toContain('env: CHANGE_TRACKING_ENVIRONMENT')
  })

  it.each([
    [['change', '--dry-run', ''], '--dry-run'],
    [['change', '--version', ''], '--version'],
    [['hello', '--base-url='], '--base-url'],
    [['run', '--environment', ' ', '--', 'true'], '--environment']
  ])('refuse %j: a flag given empty is a usage error naming it', (args, flag) => {
    const error = refusal(args)
    expect(error).toBeInstanceOf(CommanderError)
    expect(error.message).toMatch(new RegExp(`^error: ${flag} is empty`))
  })

  it('show their default, and leave a setting the command does not take empty', () => {
    const hello = parse(['hello'])
    expect(hello.inputs['timeout-seconds']).toBe('30')
    expect(hello.inputs['labels']).toBe('')
    expect(hello.inputs['include-commits']).toBe('')
    expect(hello.inputs['command']).toBe('hello')
  })

  it('read `change --version` as the change’s version, not the tool’s', () => {
    expect(parse(['change', '--version', 'v1.2.3']).inputs['version']).toBe('v1.2.3')
  })

  it('keep the deploy command after --, with its own flags, and record it as a change', () => {
    const run = parse(['run', '--labels', 'web', '--', './deploy.sh', '--prod', '-v'])
    expect(run.deploy).toEqual(['./deploy.sh', '--prod', '-v'])
    expect(run.inputs['command']).toBe('change')
    expect(run.inputs['labels']).toBe('web')
  })

  it.each([
    [['echo', 'helm', 'upgrade', 'app', './chart', '--version', '1.2.3', '--description', 'x']],
    [['echo', 'terraform', 'apply', '--json']],
    [['echo', 'deploy', '--environment', 'prod', '--dry-run']],
    [['echo', 'kubectl', 'apply', '-f', 'k.yaml']],
    [['./deploy.sh', '--', 'x']]
  ])('give `run` %j, without --, to the deploy, every word', deploy => {
    const run = parse(['run', ...deploy])
    expect(run.deploy).toEqual(deploy)
    expect(run.inputs['version']).toBe('')
    expect(run.inputs['environment']).toBe('')
    expect(run.inputs['dry-run']).toBe('false')
    expect(run.options.json).toBe(false)
  })

  it('read the flags of `run` before --', () => {
    const json = parse(['run', '--json', '--', 'printf', 'x'])
    expect([json.deploy, json.options.json]).toEqual([['printf', 'x'], true])
    const dryRun = parse(['run', '--dry-run', '--', 'cmd'])
    expect([dryRun.deploy, dryRun.inputs['dry-run']]).toEqual([['cmd'], 'true'])
  })
})

describe('the API key', () => {
  it('comes from CHANGE_TRACKING_API_KEY', () => {
    const hello = parse(['hello'], { CHANGE_TRACKING_API_KEY: 'k-env' })
    expect(hello.inputs['api-key']).toBe('k-env')
    expect(hello.apiKeyFile).toBeUndefined()
  })

  it('is left to its file when --api-key-file (or its variable) names one, read after parsing', () => {
    const env = { CHANGE_TRACKING_API_KEY: 'k-env' }
    const fromFlag = parse(['hello', '--api-key-file', '/no/such/key'], env)
    expect([fromFlag.apiKeyFile, fromFlag.inputs['api-key']]).toEqual(['/no/such/key', ''])
    const fromVariable = parse(['hello'], { ...env, CHANGE_TRACKING_API_KEY_FILE: '/run/key' })
    expect(fromVariable.apiKeyFile).toBe('/run/key')
  })

  it('never comes from a flag: refused, saying why, without quoting it', () => {
    const error = refusal(['change', '--api-key', 'sk_live_secret'])
    expect(error).toBeInstanceOf(CommanderError)
    expect(error.message).toContain('process listings and shell history')
    expect(error.message).not.toContain('sk_live_secret')
  })
})

describe('the values no message may repeat', () => {
  const key = 'sk_live_0123456789'
  const env = { CHANGE_TRACKING_API_KEY: key }

  it.each([
    [['--api-key=<k>', 'hello'], {}],
    [['hello', '--apikey=<k>'], {}],
    [['hello', '--api_key=<k>'], {}],
    [['hello', '--api-keys=<k>'], {}],
    [['hello', '--API-KEY=<k>'], {}],
    [['hello', '--Access-Token', '<k>'], {}],
    [['change', '--client_secret=<k>', '--password', '<k>'], {}],
    [['hello', '--labelz=<k>'], env],
    [['<k>'], env]
  ])('are found in %j', (args, given) => {
    const argv = args.map(arg => arg.replace('<k>', key))
    expect(sensitiveValues(argv, given)).toContain(key)
    const messages: string[] = []
    const redactor = new Redactor()
    for (const value of sensitiveValues(argv, given)) redactor.add(value)
    const write = (text: string) => messages.push(redactor.redact(text))
    const program = buildProgram('1.2.3', { writeOut: write, writeErr: write }, given)
    expect(() => program.parse(argv, { from: 'user' })).toThrow()
    expect(messages.join('')).toMatch(/^error: /)
    expect(messages.join('')).not.toContain(key)
  })

  it('are only those: a flag that holds no secret keeps its value', () => {
    expect(sensitiveValues(['change', '--version', 'v1', '--labels=a,b'], {})).toEqual([])
    // The key file's path is no secret: redacted, "key" would vanish from every line.
    expect(sensitiveValues(['hello', '--api-key-file', 'key'], {})).toEqual([])
    expect(sensitiveValues(['--token'], { CHANGE_TRACKING_API_KEY: '' })).toEqual([])
  })
})

describe('buildProgram, for the command line given', () => {
  const names = (argv: string[]) =>
    buildProgram('1.2.3', quiet, {}, argv).commands.map(command => command.name())
  it('builds only the command the line names, and every one for help, a typo or --version', () => {
    expect(names(['change', '--version', 'v1'])).toEqual(['change'])
    expect(names(['run', '--', 'change'])).toEqual(['run'])
    for (const argv of [['--help'], ['chnage'], ['help', 'run'], ['--version'], []])
      expect(names(argv)).toHaveLength(7)
  })
})

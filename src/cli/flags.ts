/**
 * The command line's flags: each is the action input of the same name, and can come from a
 * CHANGE_TRACKING_<NAME> variable (a flag wins). Parsed by commander, which writes the help and
 * suggests the closest name; the values are then read by the shared parsers as the action's are.
 */
import { Command as Program, Option, type OutputConfiguration } from 'commander'
import { COMMANDS, Inputs, SETTING_DEFAULTS, type Command, type InputName } from '../settings.ts'
import type { Env } from '../settings.ts'

/** What a command line can ask for: the action's commands, and `run`, which wraps a deploy. */
export type CliCommand = Command | 'run'

/** Each flag's help, and the commands that take it (every command when none is named). */
const FLAGS: Partial<Record<InputName, [help: string, ...commands: CliCommand[]]>> = {
  'base-url': ["the service's https address"],
  'fail-on-error': ['auto | true | false: when tracking makes the command fail'],
  'dry-run': ['send nothing; print each request that would be sent'],
  'timeout-seconds': ['the most one attempt of a request may take (1 to 300)'],
  'max-attempts': ['attempts per request, the first included (1 to 10)'],
  description: ["the change's description (default: a sentence from the deploy)", 'run', 'change'],
  environment: ['the environment that changed (default: the CI’s)', 'run', 'change'],
  service: ["the system that changed (default: the repository's path)", 'run', 'change'],
  version: ['the version that shipped (default: the commit SHA)', 'run', 'change'],
  user: ['who made the change (default: who started the pipeline)', 'run', 'change'],
  comment: ['additional context', 'run', 'change'],
  team: ['the team that made the change', 'run', 'change'],
  labels: ['labels, separated by commas', 'run', 'change'],
  'custom-metadata': ['extra metadata as JSON', 'run', 'change'],
  'created-at': ['when it happened: Unix seconds or milliseconds, or ISO 8601', 'run', 'change'],
  'heartbeat-id': ['a heartbeat monitor, pinged after a success', 'run', 'change', 'heartbeat'],
  'include-commits': ["read what shipped from the checkout's git history", 'run', 'change'],
  'previous-version': ["the previous deploy's commit SHA, tag or branch", 'run', 'change'],
  services: ['several services, one per line: NAME or NAME: PATTERN …', 'run', 'change'],
  'auto-labels': ["add the tool's own key:value labels after yours", 'run', 'change'],
  'risk-paths': ['risk categories, one per line, as NAME: PATTERN …', 'run', 'change'],
  'issue-keys': ['auto | none | project prefixes (ENG, OPS)', 'run', 'change'],
  remediates: ['what this deploy fixes: a change id or a version', 'run', 'change'],
  artifact: ['the image (…@sha256:…) or purl (pkg:…) that shipped', 'run', 'change'],
  'otel-attributes': ["add OpenTelemetry's names to custom_metadata (otel)", 'run', 'change'],
  events: ['events inline: a JSON event, a JSON array or NDJSON', 'events'],
  'events-file': ['a JSON or NDJSON file of events', 'events'],
  'event-ids': ['event ids, separated by commas', 'event-results'],
  'change-id': ['the id of the change to read back', 'get-change']
}
const COMMAND_HELP: Record<CliCommand, string> = {
  run: 'run the deploy command, then record how it ended as one change',
  change: 'record a change (then a heartbeat, with --heartbeat-id)',
  heartbeat: 'send a heartbeat',
  events: 'send events',
  'event-results': 'read the evaluation results of events',
  'get-change': 'read a change back',
  hello: 'check the API key'
}
const BOOLEAN_FLAGS = new Set(['dry-run', 'include-commits', 'auto-labels', 'otel-attributes'])

/** A command line read: what to do, and each setting as the shared parsers read it. */
export interface Invocation {
  command: CliCommand
  /** The deploy command and its arguments: `run`'s words (commander refuses another's). */
  deploy: string[]
  /** The file that holds the API key (see readSecretFile); the variable's key is then not used. */
  apiKeyFile?: string
  /** The command line's own flags, which no action input matches. */
  options: { json: boolean; outputs?: string; summary?: string; cdevent?: string; debug: boolean }
  /** Each setting's raw value, by name: its flag, else its variable, else its default, else ''. */
  inputs: Record<string, string>
  /** How each setting is named in messages: the flag, or the variable its value came from. */
  inputNames: Record<string, string>
}

export const variableOf = (name: string): string =>
  `CHANGE_TRACKING_${name.toUpperCase().replace(/-/g, '_')}`
const camel = (name: string): string => name.replace(/-(.)/g, (_, c: string) => c.toUpperCase())

/**
 * The command line read: what to do, or undefined when no command was named. Help, --version and
 * a refusal throw commander's error (see `exitCode`), having written where `output` says.
 */
export function parseCommandLine(
  argv: readonly string[],
  env: Env,
  output: OutputConfiguration,
  version: string
): Invocation | undefined {
  let invocation: Invocation | undefined
  const program = buildProgram(version, output, env, argv, found => {
    invocation = found
  })
  program.parse(argv, { from: 'user' })
  return invocation
}

/**
 * The program, with one subcommand per command, for parsing and for the help. It throws rather
 * than exits, and writes where `output` says; its subcommands inherit both, set before them.
 */
export function buildProgram(
  version: string,
  output: OutputConfiguration,
  env: Env,
  argv: readonly string[] = [],
  onCommand: (invocation: Invocation) => void = () => {}
): Program {
  const program = new Program('change-tracking')
    .description('Record deploys as changes in the change-tracking service, from any CI.')
    // The receiver has a door of its own, routed before these commands are parsed.
    .addHelpText('after', "\nArgo CD's and Flux's deploys: change-tracking serve --help")
    .version(version)
    .exitOverride()
    .configureOutput(output)
    // Only before a command: `change --version v1.2.3` is the change's version, not ours.
    .enablePositionalOptions()
  // A command line that names its command builds only that one (each costs start-up time);
  // help, a typo and --version see them all.
  const named = argv.find(word => !word.startsWith('-')) as CliCommand
  const all = ['run', ...COMMANDS] as CliCommand[]
  for (const command of all.includes(named) ? [named] : all) {
    const sub = program.command(command).description(COMMAND_HELP[command])
    for (const [name, [help, ...commands]] of Object.entries(FLAGS))
      if (commands.length === 0 || commands.includes(command)) sub.addOption(flagOption(name, help))
    sub
      .addOption(flagOption('api-key-file', 'a file holding the API key'))
      .addOption(new Option('--api-key <key>').hideHelp())
      .option('--json', 'print the outputs as one JSON object on standard output')
      .addOption(flagOption('outputs', 'write the outputs to this file, as NAME=value lines'))
      .addOption(flagOption('summary', 'write the Markdown summary to this file'))
      .option('--debug', 'say where each value came from')
    if (command === 'run' || command === 'change')
      sub.addOption(flagOption('cdevent', 'write a CDEvent per change to this file, as JSON lines'))
    // Commander reads each flag's variable from process.env: the env given wins, before the action.
    sub.hook('preAction', () => fromEnv(sub, env))
    // Every word from the deploy's own name on is the deploy's: `run helm … --version 1.2.3`.
    if (command === 'run')
      sub.argument('[deploy...]', 'the deploy command, after --').passThroughOptions()
    sub.action(() => onCommand(invocationOf(command, sub, env)))
  }
  return program
}

function flagOption(name: string, help: string): Option {
  const takes = /file$|^cdevent$/.test(name) ? '<path>' : '<value>'
  const value = BOOLEAN_FLAGS.has(name) ? '[true|false]' : takes
  const option = new Option(`--${name} ${value}`, help).env(variableOf(name))
  // A boolean flag alone means true.
  if (BOOLEAN_FLAGS.has(name)) option.preset('true')
  const fallback = SETTING_DEFAULTS[name as InputName]
  return fallback === undefined ? option : option.default(fallback)
}

/**
 * Each flag that the command line left unset, from its variable in the env given; an empty one
 * means its default. Commander read its variables from process.env: one the env given lacks, or
 * holds empty, goes back to the default.
 */
function fromEnv(sub: Program, env: Env): void {
  for (const option of sub.options) {
    const [key, value] = [option.attributeName(), env[option.envVar ?? '']]
    const source = sub.getOptionValueSource(key)
    if (source === 'cli') continue
    if (value) sub.setOptionValueWithSource(key, value, 'env')
    else if (source === 'env') sub.setOptionValueWithSource(key, option.defaultValue, 'default')
  }
}

function invocationOf(command: CliCommand, sub: Program, env: Env): Invocation {
  const values = sub.opts<Record<string, string | boolean | undefined>>()
  // A usage error: commander says it and throws, and the command line exits 2.
  if (values['apiKey'] !== undefined)
    sub.error(
      `error: The API key is never taken from a flag: process listings and shell history would show it. Set ${variableOf('api-key')}, or give --api-key-file PATH.`
    )
  // `--dry-run ""` is no dry run, and would send: a flag given is given a value.
  const empty = sub.options.find(option => {
    const key = option.attributeName()
    return sub.getOptionValueSource(key) === 'cli' && !String(values[key]).trim()
  })
  if (empty) sub.error(`error: ${empty.long} is empty: give it a value, or leave it out.`)
  if (command === 'run' && sub.args.length === 0)
    sub.error(
      'error: run needs the deploy command after --, as in: change-tracking run -- ./deploy.sh production'
    )
  const text = (name: string): string | undefined =>
    typeof values[name] === 'string' ? values[name] : undefined
  const apiKeyFile = text('apiKeyFile')
  // The command, and the key, which no flag gives; the action's other inputs keep their defaults.
  const fixed: Record<string, string> = {
    [Inputs.Command]: command === 'run' ? 'change' : command,
    [Inputs.ApiKey]: apiKeyFile === undefined ? (env[variableOf('api-key')] ?? '') : ''
  }
  const names = Object.values(Inputs)
  return {
    command,
    deploy: sub.args,
    apiKeyFile,
    options: {
      json: values['json'] === true,
      outputs: text('outputs'),
      summary: text('summary'),
      cdevent: text('cdevent'),
      debug: values['debug'] === true
    },
    inputs: Object.fromEntries(
      names.map(name => [name, fixed[name] ?? (text(camel(name)) ?? '').trim()])
    ),
    inputNames: Object.fromEntries(
      names.map(name => {
        const source = sub.getOptionValueSource(camel(name))
        return [name, source === 'env' ? variableOf(name) : `--${name}`]
      })
    )
  }
}

/**
 * Every value of the command line that no message may repeat: the key, and the value of each
 * flag, known or not, whose name (lowercased, without - and _) says it holds a secret.
 */
export function sensitiveValues(argv: readonly string[], env: Env): string[] {
  const values = argv.flatMap((word, at) => {
    const [, name = '', value] = /^-+([^=]*)(?:=(.*))?$/s.exec(word) ?? []
    // The key file's path is no secret, and redacted it would hide every word it holds.
    const secret =
      name !== 'api-key-file' &&
      /apikey|token|secret|password/.test(name.toLowerCase().replace(/[-_]/g, ''))
    return secret ? [value ?? argv[at + 1] ?? ''] : []
  })
  return [env[variableOf('api-key')] ?? '', ...values].filter(Boolean)
}

/**
 * The command line's flags: each is the action input of the same name, and can come from a
 * CHANGE_TRACKING_<NAME> variable (a flag wins). Parsed by commander, which writes the help and
 * suggests the closest name; the values are then read by the shared parsers as the action's are.
 */
import { readFileSync } from 'node:fs'
import { Command as Program, Option } from 'commander'
import { COMMANDS, Inputs, type Command, type InputName } from '../settings.ts'

/** What a command line can ask for: the action's commands, and `run`, which wraps a deploy. */
export type CliCommand = Command | 'run'

const CHANGE_FLAGS: readonly InputName[] = [
  'description',
  'environment',
  'service',
  'version',
  'user',
  'comment',
  'team',
  'labels',
  'custom-metadata',
  'created-at',
  'heartbeat-id',
  'include-commits',
  'previous-version',
  'services',
  'auto-labels',
  'risk-paths',
  'issue-keys',
  'remediates'
]
const COMMAND_FLAGS: Record<CliCommand, readonly InputName[]> = {
  run: CHANGE_FLAGS,
  change: CHANGE_FLAGS,
  heartbeat: ['heartbeat-id'],
  events: ['events', 'events-file'],
  'event-results': ['event-ids'],
  'get-change': ['change-id'],
  hello: []
}
const EVERY_COMMAND: readonly InputName[] = [
  'base-url',
  'fail-on-error',
  'dry-run',
  'timeout-seconds',
  'max-attempts'
]

/** One line of help per flag; the action's inputs (action.yml) say more. */
const FLAG_HELP: Partial<Record<InputName, string>> = {
  'base-url': "the service's https address",
  'fail-on-error': 'auto | true | false: when tracking makes the command fail',
  'dry-run': 'send nothing; print each request that would be sent',
  'timeout-seconds': 'the most one attempt of a request may take (1 to 300)',
  'max-attempts': 'attempts per request, the first included (1 to 10)',
  description: "the change's description (default: a sentence built from the deploy)",
  environment: 'the environment that changed (default: the CI deploy environment)',
  service: "the system that changed (default: the repository's path)",
  version: 'the version that shipped (default: the commit SHA)',
  user: 'who made the change (default: who started the pipeline)',
  comment: 'additional context',
  team: 'the team that made the change',
  labels: 'labels, separated by commas',
  'custom-metadata': 'extra metadata as JSON',
  'created-at': 'when it happened: Unix seconds or milliseconds, or ISO 8601',
  'heartbeat-id': 'a heartbeat monitor to ping after a successful deploy',
  'include-commits': 'read what shipped since the previous deploy',
  'previous-version': "the previous deploy's commit SHA, tag or branch",
  services: 'several services, one per line: NAME or NAME: PATTERN …',
  'auto-labels': "add the tool's own key:value labels after yours",
  'risk-paths': 'risk categories, one per line, as NAME: PATTERN …',
  'issue-keys': 'auto | none | project prefixes (ENG, OPS)',
  remediates: 'what this deploy fixes: a change id or a version',
  events: 'events inline: a JSON event, a JSON array or NDJSON',
  'events-file': 'a JSON or NDJSON file of events',
  'event-ids': 'event ids, separated by commas',
  'change-id': 'the id of the change to read back'
}

/** The defaults, as action.yml gives them; every other input is empty unless given. */
export const FLAG_DEFAULTS: Partial<Record<InputName, string>> = {
  'fail-on-error': 'auto',
  'dry-run': 'false',
  'timeout-seconds': '30',
  'max-attempts': '4',
  'include-commits': 'true',
  'auto-labels': 'true',
  'issue-keys': 'auto'
}
const BOOLEAN_FLAGS = new Set<InputName>(['dry-run', 'include-commits', 'auto-labels'])

/** The command line's own flags, which no action input matches. */
export interface CliOptions {
  apiKeyFile?: string
  json: boolean
  outputs?: string
  summary?: string
  debug: boolean
}

/** A command line read: what to do, and each setting as the shared parsers read it. */
export interface Invocation {
  command: CliCommand
  /** The deploy command and its arguments, for `run`. */
  deploy: string[]
  options: CliOptions
  /** The raw value of a setting, '' when not given: a flag, else its variable, else its default. */
  getInput: (name: string) => string
  /** How a message names a setting's value: the flag, or the variable it came from. */
  nameOf: (name: string) => string
}

export const variableOf = (name: string): string =>
  `CHANGE_TRACKING_${name.toUpperCase().replace(/-/g, '_')}`
const camel = (name: string): string => name.replace(/-(.)/g, (_, c: string) => c.toUpperCase())

/** The program, with one subcommand per command, for parsing and for the help. */
export function buildProgram(
  version: string,
  output: { writeOut: (text: string) => void; writeErr: (text: string) => void },
  onCommand: (invocation: Invocation) => void
): Program {
  // Set before the subcommands are made, which inherit them: throw rather than exit, and write
  // where the caller says.
  const program = new Program('change-tracking')
    .description('Record deploys as changes in the change-tracking service, from any CI.')
    .version(version)
    .exitOverride()
    .configureOutput(output)
    .showSuggestionAfterError(true)
    .enablePositionalOptions()
  for (const command of ['run', ...COMMANDS] as CliCommand[]) {
    const sub = program.command(command).description(COMMAND_HELP[command])
    for (const name of [...EVERY_COMMAND, ...COMMAND_FLAGS[command]])
      sub.addOption(flagOption(name))
    sub
      .addOption(
        new Option('--api-key-file <path>', 'a file holding the API key').env(
          variableOf('api-key-file')
        )
      )
      .addOption(new Option('--api-key <key>').hideHelp())
      .option('--json', 'print the outputs as one JSON object on standard output')
      .addOption(
        new Option('--outputs <file>', 'write the outputs as NAME=value lines').env(
          variableOf('outputs')
        )
      )
      .addOption(
        new Option('--summary <file>', 'write the Markdown summary').env(variableOf('summary'))
      )
      .option('--debug', 'say where each value came from')
    if (command === 'run')
      sub.argument('<deploy...>', 'the deploy command and its arguments, after --')
    sub.action((...args: unknown[]) => {
      const deploy = command === 'run' ? (args[0] as string[]) : []
      onCommand(invocationOf(command, sub, deploy))
    })
  }
  return program
}

const COMMAND_HELP: Record<CliCommand, string> = {
  run: 'run the deploy command, then record how it ended as one change',
  change: 'record a change (then a heartbeat, with --heartbeat-id)',
  heartbeat: 'send a heartbeat signal',
  events: 'send events',
  'event-results': 'read the evaluation results of events',
  'get-change': 'read a change back',
  hello: 'check the API key'
}

function flagOption(name: InputName): Option {
  const value = BOOLEAN_FLAGS.has(name)
    ? ' [true|false]'
    : ` <${name === 'events-file' ? 'path' : 'value'}>`
  const option = new Option(`--${name}${value}`, FLAG_HELP[name]).env(variableOf(name))
  const fallback = FLAG_DEFAULTS[name]
  // A boolean flag alone means true.
  if (BOOLEAN_FLAGS.has(name)) option.preset('true')
  return fallback === undefined ? option : option.default(fallback)
}

function invocationOf(command: CliCommand, sub: Program, deploy: string[]): Invocation {
  const values = sub.opts<Record<string, string | boolean | undefined>>()
  if (values['apiKey'] !== undefined) {
    throw new UsageError(
      `The API key is never taken from a flag: process listings and shell history would show it. Set ${variableOf('api-key')}, or give --api-key-file PATH.`
    )
  }
  const apiKeyFile = values['apiKeyFile'] as string | undefined
  // The action's own inputs, as a command line has them: its summary goes to --summary.
  const fixed: Record<string, string> = {
    [Inputs.JobSummary]: 'true',
    [Inputs.RecordAt]: 'now',
    [Inputs.GithubMetadata]: 'true',
    [Inputs.Command]: command === 'run' ? 'change' : command,
    [Inputs.ApiKey]:
      apiKeyFile === undefined ? (process.env[variableOf('api-key')] ?? '') : readKey(apiKeyFile)
  }
  return {
    command,
    deploy,
    options: {
      apiKeyFile,
      json: values['json'] === true,
      outputs: values['outputs'] as string | undefined,
      summary: values['summary'] as string | undefined,
      debug: values['debug'] === true
    },
    getInput: name => {
      if (name in fixed) return fixed[name]
      const value = values[camel(name)] ?? FLAG_DEFAULTS[name as InputName]
      return typeof value === 'string' ? value.trim() : ''
    },
    nameOf: name => {
      const source = sub.getOptionValueSource(camel(name))
      return source === 'env' ? variableOf(name) : `--${name}`
    }
  }
}

/** The key from its file: a trailing line break is not part of it. */
function readKey(path: string): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'an error'
    throw new UsageError(`--api-key-file ${JSON.stringify(path)} could not be read (${code}).`)
  }
}

/** A command line that is wrong on every run: exit 2, before anything is sent or run. */
export class UsageError extends Error {}

/**
 * `change-tracking serve`: the receiver's door. Its flags and CHANGE_TRACKING_* variables are read
 * once; it takes its state folder, listens, and sends what waits. On SIGTERM or SIGINT it stops
 * accepting, gives the change it is sending ten seconds, keeps the rest for the next start and
 * exits 0. It refuses to start (exit 2, one line) without what it needs. Only this file touches
 * the process: its signals.
 */
import { once } from 'node:events'
import { readFile, stat } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { Command, Option } from 'commander'
import { errorMessage, InputError } from '../errors.ts'
import { ACTION_VERSION } from '../package.ts'
import { Redactor } from '../redact.ts'
import { safeLine } from '../report.ts'
import { plural } from '../helpers/text.ts'
import type { Env } from '../settings.ts'
import { parseBaseUrl } from '../values/base-url.ts'
import { parseApiKey, parseWholeNumber } from '../values/parsers.ts'
import type { DeployChange } from './deploys.ts'
import { CONTROLLERS, printConfig, type PrintedController } from './print-config.ts'
import { Recorder } from './record.ts'
import { sendWaiting } from './sender.ts'
import { applyInput, createReceiverServer, logWriter, Metrics, type Log } from './server.ts'
import { StateFolder } from './state.ts'

/** What it cannot start without: wrong on every start, so not worth a restart. */
const USAGE_EXIT = 2
/** After SIGTERM or SIGINT, the change being sent gets this long; it then waits for the next start. */
const SHUTDOWN_GRACE_MS = 10_000
/** Deploys waiting on a later notification (healthy resources, an end) are looked at this often. */
const EXPIRY_CHECK_MS = 60_000
/** A webhook secret is a few dozen characters: a larger file is not one; a shorter one is weak. */
const MAX_SECRET_FILE_BYTES = 64 * 1024
const MIN_SECRET_CHARS = 16
const DEFAULT_PORT = '8080'
const DEFAULT_STATE_DIR = '.change-tracking'
const VARIABLES = {
  apiKey: 'CHANGE_TRACKING_API_KEY',
  baseUrl: 'CHANGE_TRACKING_BASE_URL',
  port: 'CHANGE_TRACKING_PORT',
  stateDir: 'CHANGE_TRACKING_STATE_DIR',
  secret: 'CHANGE_TRACKING_WEBHOOK_SECRET'
}

type Io = { stdout: (text: string) => void; stderr: (line: string) => void; cwd: string }

interface Flags {
  port?: string
  host: string
  stateDir?: string
  webhookSecretFile?: string
  logFormat: 'text' | 'json'
  publicUrl?: string
  printConfig?: PrintedController
  baseUrl?: string
  apiKey?: string
}

/** Runs the receiver until SIGTERM or SIGINT; resolves with the exit status. */
export async function serve(argv: readonly string[], env: Env, io: Io): Promise<number> {
  const redactor = new Redactor()
  for (const secret of [env[VARIABLES.apiKey], env[VARIABLES.secret]])
    if (secret) redactor.add(secret)
  const say = (line: string): void => io.stderr(safeLine(redactor, line))
  const flags = readFlags(argv, io, say)
  if (typeof flags === 'number') return flags
  if (flags.printConfig) {
    try {
      io.stdout(printConfig(flags.printConfig, flags.publicUrl))
      return 0
    } catch (error) {
      say(`error: ${errorMessage(error)}`)
      return USAGE_EXIT
    }
  }
  const settings = await readSettings(flags, env, io.cwd).catch((error: unknown) => error as Error)
  if (settings instanceof Error) {
    say(`error: ${settings.message} The receiver did not start.`)
    return USAGE_EXIT
  }
  redactor.add(settings.secret)
  const state = await StateFolder.open(settings.stateDir, applyInput).catch(
    (error: unknown) => error as Error
  )
  if (state instanceof Error) {
    say(`error: The state folder (--state-dir): ${state.message} The receiver did not start.`)
    return USAGE_EXIT
  }
  const log = logWriter(flags.logFormat, redactor, line => io.stdout(`${line}\n`))
  if (state.skipped > 0)
    log('warn', `${plural(state.skipped, 'unreadable line')} of the queue skipped.`)
  const metrics = new Metrics()
  const { baseUrl, apiKey, secret } = settings
  const recorder = new Recorder({ baseUrl, apiKey, redactor, advice: ADVICE })
  const server = createReceiverServer({ secret, state, metrics, log, clock: Date.now })
  server.listen(settings.port, settings.host)
  const listening = await once(server, 'listening').catch((error: unknown) => error as Error)
  if (listening instanceof Error) {
    say(`error: Cannot listen on ${settings.host} port ${settings.port}: ${listening.message}`)
    recorder.close()
    await state.close()
    return 1
  }
  const { port } = server.address() as AddressInfo
  log(
    'info',
    `Listening on ${settings.host} port ${port} for Argo CD (POST /argocd) and Flux (POST /flux); ${plural(state.waitingCount, 'change')} waiting in ${settings.stateDir}.`
  )
  const stopping = new AbortController()
  const record = (change: DeployChange) => recorder.record(change)
  const sending = sendWaiting({ state, record, log, metrics }, stopping.signal)
  const expiring = setInterval(() => expireDeploys(state, log), EXPIRY_CHECK_MS)

  const [signal] = (await Promise.race([
    once(process, 'SIGTERM'),
    once(process, 'SIGINT')
  ])) as string[]
  log('info', `${signal}: no more notifications are accepted; stopping.`)
  clearInterval(expiring)
  const closed = new Promise(resolve => server.close(resolve))
  server.closeIdleConnections()
  stopping.abort()
  // What is still under way then is cut: the change waits for the next start (and may be sent twice).
  const cut = setTimeout(() => recorder.close(), SHUTDOWN_GRACE_MS)
  await sending
  clearTimeout(cut)
  recorder.close()
  server.closeAllConnections()
  await closed
  const left = state.waitingCount
  await state.close()
  log('info', `Stopped; ${plural(left, 'change')} left for the next start.`)
  return 0
}

/** What a failure to reach the service tells whoever runs the receiver to do. */
const ADVICE = {
  raiseTimeout: 'check the service',
  checkAddress: `check --base-url (${VARIABLES.baseUrl})`,
  checkApiKey: `check ${VARIABLES.apiKey} and restart the receiver`
}

/** The flags, or the exit status after help (0) or a refusal commander has said (2). */
function readFlags(argv: readonly string[], io: Io, say: (line: string) => void): Flags | number {
  const program = new Command('change-tracking serve')
    .description('Receive Argo CD and Flux notifications, and record each deploy as one change.')
    .version(ACTION_VERSION)
    .exitOverride()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: text => io.stderr(text.trimEnd()),
      outputError: text => say(text.trimEnd())
    })
    .option('--port <number>', `the port to listen on (${VARIABLES.port}; default ${DEFAULT_PORT})`)
    .option('--host <address>', 'the address to listen on', '0.0.0.0')
    .option(
      '--state-dir <path>',
      `the state folder (${VARIABLES.stateDir}; default ${DEFAULT_STATE_DIR})`
    )
    .option(
      '--webhook-secret-file <path>',
      `a file holding the webhook secret (or ${VARIABLES.secret})`
    )
    .addOption(
      new Option('--log-format <format>', 'text or json lines')
        .choices(['text', 'json'])
        .default('text')
    )
    .option('--base-url <url>', `the service's https address (${VARIABLES.baseUrl})`)
    .addOption(
      new Option(
        '--print-config <controller>',
        'print the controller’s manifests, then exit'
      ).choices(CONTROLLERS)
    )
    .option(
      '--public-url <url>',
      'the receiver’s address, for --print-config (default: its in-cluster Service)'
    )
    .addOption(new Option('--api-key <key>').hideHelp())
  try {
    program.parse(argv, { from: 'user' })
  } catch (error) {
    return (error as { exitCode?: number }).exitCode === 0 ? 0 : USAGE_EXIT
  }
  const flags = program.opts<Flags>()
  if (flags.apiKey !== undefined) {
    say(
      `error: The API key is never taken from a flag, which process listings show: set ${VARIABLES.apiKey}.`
    )
    return USAGE_EXIT
  }
  return flags
}

/** The receiver's settings, read once; the key and the secret are never printed. */
interface ServeSettings {
  port: number
  host: string
  stateDir: string
  secret: string
  apiKey: string
  baseUrl: URL
}

/** Each setting from its flag, else its variable, else its default; the first refusal is thrown. */
async function readSettings(flags: Flags, env: Env, cwd: string): Promise<ServeSettings> {
  const portName = flags.port === undefined ? VARIABLES.port : '--port'
  const rawPort = flags.port ?? env[VARIABLES.port] ?? DEFAULT_PORT
  const port = inputOf(portName, () => parseWholeNumber(portName, rawPort, 0, 65535))
  const file = flags.webhookSecretFile
  const secret = checkSecret(
    file === undefined ? (env[VARIABLES.secret] ?? '') : await readSecretFile(file),
    file === undefined ? VARIABLES.secret : '--webhook-secret-file'
  )
  const apiKey = inputOf(VARIABLES.apiKey, () => parseApiKey(env[VARIABLES.apiKey] ?? ''))
  const baseUrlName = flags.baseUrl === undefined ? VARIABLES.baseUrl : '--base-url'
  const rawBaseUrl = flags.baseUrl ?? env[VARIABLES.baseUrl] ?? ''
  const baseUrl = inputOf(baseUrlName, () => parseBaseUrl(rawBaseUrl))
  const stateDir = resolve(cwd, flags.stateDir ?? env[VARIABLES.stateDir] ?? DEFAULT_STATE_DIR)
  return { port, host: flags.host, stateDir, secret, apiKey, baseUrl }
}

/** A parser's value, or its refusal in the receiver's words: the flag or variable it came from. */
function inputOf<T>(name: string, parse: () => T): T {
  try {
    return parse()
  } catch (error) {
    if (!(error instanceof InputError)) throw error
    const said = error.missing ? `No API key: set ${VARIABLES.apiKey}.` : error.saying(name)
    throw new Error(said, { cause: error })
  }
}

/** The secret's file, without its final line break; a Kubernetes secret's file is a link, followed. */
async function readSecretFile(file: string): Promise<string> {
  const info = await stat(file).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code ?? 'an error'
    throw new Error(`--webhook-secret-file cannot be read (${code}).`, { cause: error })
  })
  if (!info.isFile() || info.size > MAX_SECRET_FILE_BYTES) {
    throw new Error(
      `--webhook-secret-file must be a file of at most ${MAX_SECRET_FILE_BYTES / 1024} KiB.`
    )
  }
  return (await readFile(file, 'utf8')).replace(/\r?\n$/, '')
}

/** Argo CD sends the secret in a header: visible ASCII, and long enough not to be guessed. */
function checkSecret(secret: string, name: string): string {
  const make = '(make one with: openssl rand -hex 32)'
  if (secret === '') {
    throw new Error(
      `No webhook secret: set ${VARIABLES.secret}, or give --webhook-secret-file FILE ${make}.`
    )
  }
  if (/^[\x21-\x7e]+$/.test(secret) && secret.length >= MIN_SECRET_CHARS) return secret
  throw new Error(
    `${name} must hold at least ${MIN_SECRET_CHARS} visible ASCII characters and nothing else, as Argo CD sends it in a header ${make}.`
  )
}

/** Records the deploys whose wait ended (healthy resources, an end); tried again when it fails. */
function expireDeploys(state: StateFolder, log: Log): void {
  const now = Date.now()
  state.update({ expire: true }, now).catch((error: unknown) => {
    log(
      'warn',
      `Deploys waiting on a later notification could not be looked at: ${errorMessage(error)}`
    )
  })
}

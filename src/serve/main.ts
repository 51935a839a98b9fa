/**
 * `change-tracking serve`: the receiver's door. Its flags and CHANGE_TRACKING_* variables are read
 * once; it takes its state folder, listens, and sends what waits until SIGTERM or SIGINT. Only this
 * file touches the process: its signals.
 */
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { Command, Option } from 'commander'
import { errorMessage, InputError } from '../errors.ts'
import { plural } from '../helpers/text.ts'
import { ACTION_VERSION } from '../package.ts'
import { Redactor } from '../redact.ts'
import type { ConfiguredForge } from '../shipped/forge-lookup.ts'
import { safeLine } from '../report.ts'
import type { Env } from '../settings.ts'
import { parseBaseUrl } from '../values/base-url.ts'
import { parseApiKey, parseWholeNumber } from '../values/parsers.ts'
import { readSecretFile } from '../values/secret-file.ts'
import { CONTROLLERS, printConfig, type PrintedController } from './print-config.ts'
import { sendWaiting, serviceRecorder } from './record.ts'
import { applyInput, createReceiverServer, logWriter, Metrics } from './server.ts'
import { StateFolder } from './state.ts'

/** What it cannot start without: wrong on every start, so not worth a restart. */
const USAGE_EXIT = 2
/** After SIGTERM or SIGINT, the change being sent gets this long; it then waits for the next start. */
const SHUTDOWN_GRACE_MS = 10_000
/** Deploys waiting on a later notification (healthy resources, an end) are looked at this often. */
const EXPIRY_CHECK_MS = 60_000
/** A FIFO may never be written. */
const SECRET_FILE_TIMEOUT_MS = 5_000
/** Argo CD sends the secret in a header: visible ASCII, and long enough not to be guessed. */
const MIN_SECRET_CHARS = 16
const ROUTES = 'Argo CD (POST /argocd) and Flux (POST /flux)'
const DEFAULT_PORT = '8080'
const DEFAULT_STATE_DIR = '.change-tracking'
const VARIABLES = {
  apiKey: 'CHANGE_TRACKING_API_KEY',
  baseUrl: 'CHANGE_TRACKING_BASE_URL',
  port: 'CHANGE_TRACKING_PORT',
  stateDir: 'CHANGE_TRACKING_STATE_DIR',
  secret: 'CHANGE_TRACKING_WEBHOOK_SECRET',
  // What shipped: GitHub's as its own runners name them, and GitLab's.
  githubServer: 'GITHUB_SERVER_URL',
  githubApi: 'GITHUB_API_URL',
  githubToken: 'GITHUB_TOKEN',
  gitlabServer: 'GITLAB_URL',
  gitlabToken: 'GITLAB_TOKEN'
}
/** What a failure to reach the service tells whoever runs the receiver to do. */
const ADVICE = {
  changeWait: 'check the service',
  checkAddress: `check --base-url (${VARIABLES.baseUrl})`,
  checkApiKey: `check ${VARIABLES.apiKey} and restart the receiver`
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
  const { githubToken, gitlabToken } = VARIABLES
  for (const name of [VARIABLES.apiKey, VARIABLES.secret, githubToken, gitlabToken])
    redactor.add(env[name] ?? '')
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
  const started = await start(flags, env, io.cwd, redactor).catch((error: unknown) => {
    say(`error: ${errorMessage(error)} The receiver did not start.`)
  })
  if (!started) return USAGE_EXIT
  const { settings, state } = started
  const log = logWriter(flags.logFormat, redactor, line => io.stdout(`${line}\n`))
  if (state.skipped > 0) {
    log('warn', `${plural(state.skipped, 'unreadable line')} of the queue skipped.`)
  }
  const metrics = new Metrics()
  const { baseUrl, apiKey, secret, host, forges } = settings
  const recorder = serviceRecorder({ baseUrl, apiKey, redactor, advice: ADVICE, forges, log })
  const server = createReceiverServer({ secret, state, metrics, log, clock: Date.now })
  server.listen(settings.port, host)
  const listening = await once(server, 'listening').catch((error: unknown) => error as Error)
  if (listening instanceof Error) {
    say(`error: Cannot listen on ${host} port ${settings.port}: ${listening.message}`)
    recorder.close()
    await state.close()
    return 1
  }
  const { port } = server.address() as AddressInfo
  const waiting = `${plural(state.waitingCount, 'change')} waiting in ${state.dir}`
  log('info', `Listening on ${host} port ${port} for ${ROUTES}; ${waiting}.`)
  const stopping = new AbortController()
  const sending = sendWaiting({ state, record: recorder.record, log, metrics }, stopping.signal)
  const expiring = setInterval(() => {
    state.update({ expire: true }, Date.now()).catch((error: unknown) => {
      const why = errorMessage(error)
      log('warn', `Deploys waiting on a later notification could not be looked at: ${why}`)
    })
  }, EXPIRY_CHECK_MS)

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
  const left = plural(state.waitingCount, 'change')
  await state.close()
  log('info', `Stopped; ${left} left for the next start.`)
  return 0
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
    .option('--webhook-secret-file <path>', `the webhook secret's file (or ${VARIABLES.secret})`)
    .addOption(
      new Option('--log-format <format>', 'log lines').choices(['text', 'json']).default('text')
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
  if (flags.apiKey === undefined) return flags
  const never = 'The API key is never taken from a flag, which process listings show'
  say(`error: ${never}: set ${VARIABLES.apiKey}.`)
  return USAGE_EXIT
}

/** The settings (each from its flag, else its variable, else its default), then the folder. */
async function start(flags: Flags, env: Env, cwd: string, redactor: Redactor) {
  const portName = flags.port === undefined ? VARIABLES.port : '--port'
  const rawPort = flags.port ?? env[VARIABLES.port] ?? DEFAULT_PORT
  const port = inputOf(portName, () => parseWholeNumber(portName, rawPort, 0, 65535))
  const secret = await readSecret(flags.webhookSecretFile, env)
  redactor.add(secret)
  const apiKey = inputOf(VARIABLES.apiKey, () => parseApiKey(env[VARIABLES.apiKey] ?? ''))
  const baseUrlName = flags.baseUrl === undefined ? VARIABLES.baseUrl : '--base-url'
  const rawBaseUrl = flags.baseUrl ?? env[VARIABLES.baseUrl] ?? ''
  const baseUrl = inputOf(baseUrlName, () => parseBaseUrl(rawBaseUrl))
  const forges = forgesOf(env)
  const stateDir = resolve(cwd, flags.stateDir ?? env[VARIABLES.stateDir] ?? DEFAULT_STATE_DIR)
  const state = await StateFolder.open(stateDir, applyInput).catch((error: unknown) => {
    throw new Error(`The state folder (--state-dir): ${errorMessage(error)}`)
  })
  return { settings: { port, host: flags.host, secret, apiKey, baseUrl, forges }, state }
}

/** GitHub's (github.com unless said otherwise), and GitLab's when GITLAB_URL names its server. */
function forgesOf(env: Env): ConfiguredForge[] {
  const url = (name: string, fallback = '') => {
    const value = env[name] || fallback
    if (value && URL.parse(value)?.protocol !== 'https:') {
      throw new Error(`${name} must be an https:// address, as its token may be sent there.`)
    }
    return value.endsWith('/') ? value.slice(0, -1) : value
  }
  const github: ConfiguredForge = {
    forge: 'github',
    serverUrl: url(VARIABLES.githubServer, 'https://github.com'),
    apiUrl: url(VARIABLES.githubApi, 'https://api.github.com'),
    token: env[VARIABLES.githubToken] ?? '',
    advice: { tokenInput: VARIABLES.githubToken }
  }
  const gitlab = url(VARIABLES.gitlabServer)
  if (!gitlab) return [github]
  const token = env[VARIABLES.gitlabToken] ?? ''
  const advice = { tokenInput: VARIABLES.gitlabToken }
  return [github, { forge: 'gitlab', serverUrl: gitlab, apiUrl: `${gitlab}/api/v4`, token, advice }]
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

/** The webhook secret, from its file or its variable; never printed. */
async function readSecret(file: string | undefined, env: Env): Promise<string> {
  const name = file === undefined ? VARIABLES.secret : '--webhook-secret-file'
  let secret = env[VARIABLES.secret] ?? ''
  if (file !== undefined) {
    const read = await readSecretFile(file, { name, timeoutMs: SECRET_FILE_TIMEOUT_MS })
    if ('problem' in read) throw new Error(read.problem)
    secret = read.secret
  }
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

/**
 * Every form a user installs the command line in, tested as the user gets it, against the
 * emulator (run by .ci/run; too slow for npm test, about two minutes):
 *
 * 1. The packed package, installed offline, on the oldest Node that `engines` names and on Node 24:
 *    `--version`, a `change`, and `run -- sh -c 'exit 3'`; on Node 18 and on the Node just below
 *    the minimum, every command exits 2 with one line, recording nothing.
 * 2. The package published to a local registry (verdaccio, installed here into a temporary folder):
 *    `npx -y change-tracking-action@<version>` on the system Node, with an empty cache and home,
 *    then every `npx` line of the command-line guide, its deploy a script that succeeds.
 * 3. The executables (`npm run binaries`): Linux x64 with no Node on PATH (`--version`, a `change`,
 *    a failed deploy through `run` in a git checkout), and the guide's download lines, served from
 *    a local folder; Linux arm64 under qemu-aarch64-static (`--version` and a `change`).
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { chmodSync, createReadStream, mkdirSync, mkdtempSync } from 'node:fs'
import { readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { Emulator } from '../emulator/emulator.ts'
import { testCertificate } from '../emulator/tls.ts'
import { BINARIES_DIR, CHECKSUMS, executableName } from './binaries.ts'
import { PROJECT_ROOT } from './run-bundled-action.ts'

const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'))
const MINIMUM: string = pkg.engines.node.replace(/^>=\s*/, '')
/** The Nodes below the minimum that must refuse at once: the one Debian 12 ships, and 20.17. */
const TOO_OLD = ['18.20.8', '20.17.0']
/** The local registry: a version that installs on Node 20 (6.10 wants 22), with its fix. */
const VERDACCIO = '6.8.0'
const NODE_FETCH_OVERRIDE = '2.7.0'
/** Where the guide says the executables are downloaded from; served from binaries/ here. */
const RELEASE_DOWNLOADS =
  'https://github.com/OWNER/change-tracking-action/releases/latest/download/'
const GUIDE = join(PROJECT_ROOT, 'docs', 'command-line.md')
/** One child process is killed after this long (an npm install included). */
const STEP_TIMEOUT_MS = 300_000

const work = mkdtempSync(join(tmpdir(), 'cta-release-forms-'))
/** PATH without the project's node_modules: the machine's own Node (20 on CI) and tools. */
const SYSTEM_PATH = (process.env['PATH'] ?? '')
  .split(delimiter)
  .filter(folder => folder !== '' && !folder.includes('node_modules'))
  .join(delimiter)

interface Result {
  status: number | null
  stdout: string
  stderr: string
}

/** A child process, asynchronous so that the emulator in this process keeps answering. */
function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}
): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      env: options.env ?? { ...process.env, PATH: SYSTEM_PATH },
      cwd: options.cwd ?? work,
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', chunk => {
      stdout += chunk
    })
    child.stderr.on('data', chunk => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), STEP_TIMEOUT_MS)
    child.on('error', fail)
    child.on('close', status => {
      clearTimeout(timer)
      done({ status, stdout, stderr })
    })
  })
}

function expectStatus(result: Result, status: number, what: string): Result {
  if (result.status !== status) {
    throw new Error(
      `${what}: exit ${result.status}, not ${status}\n${result.stdout}\n${result.stderr}`
    )
  }
  process.stdout.write(`ok: ${what}\n`)
  return result
}

function npm(args: string[], env: NodeJS.ProcessEnv = {}, cwd = work): Promise<Result> {
  const clean = { ...process.env, PATH: SYSTEM_PATH, ...env }
  return run('npm', ['--no-audit', '--no-fund', ...args], { env: clean, cwd })
}

const certificate = await testCertificate()
const emulator = await Emulator.start({ cert: certificate })
const service = {
  NODE_EXTRA_CA_CERTS: certificate.certPath,
  CHANGE_TRACKING_API_KEY: emulator.apiKey,
  CHANGE_TRACKING_BASE_URL: emulator.url
}

/** A git checkout of two commits, for `run`'s custom_metadata.git. */
const checkout = join(work, 'checkout')
mkdirSync(checkout)
const git = (...args: string[]) => run('git', args, { cwd: checkout })
await git('init', '-q', '-b', 'main')
for (const message of ['first', 'second']) {
  writeFileSync(join(checkout, 'file.txt'), message)
  await git('add', '.')
  await git('-c', 'user.name=ci', '-c', 'user.email=ci@example.com', 'commit', '-qm', message)
}
writeFileSync(join(checkout, 'deploy.sh'), '#!/bin/sh\necho deployed "$@"\n')
chmodSync(join(checkout, 'deploy.sh'), 0o755)

/** The change the last `run` recorded says the deploy failed and carries what git shipped. */
function expectFailedDeployRecorded(what: string): void {
  const changes = emulator.requestsTo('POST /v2/change')
  const change = JSON.parse(changes.at(-1)?.body ?? '{}')
  // The service takes custom_metadata as a JSON string.
  const metadata = JSON.parse(change.custom_metadata ?? '{}')
  if (metadata.deploy?.outcome !== 'failure' || metadata.git === undefined) {
    throw new Error(`${what}: the failed deploy is not recorded as one: ${JSON.stringify(change)}`)
  }
  process.stdout.write(`ok: ${what}: the failed deploy recorded, with custom_metadata.git\n`)
}

/** --version, change, run -- sh -c 'exit 3' with `command` (argv before the command line's). */
async function exercise(command: string[], env: NodeJS.ProcessEnv, what: string): Promise<void> {
  const [file, ...head] = command
  const version = expectStatus(
    await run(file, [...head, '--version'], { env }),
    0,
    `${what} --version`
  )
  if (version.stdout.trim() !== pkg.version) throw new Error(`${what}: --version ${version.stdout}`)
  const change = [...head, 'change', '--service', 'web', '--version', 'v1']
  expectStatus(await run(file, change, { env }), 0, `${what} change`)
  emulator.reset()
  const deploy = [...head, 'run', '--', 'sh', '-c', 'exit 3']
  expectStatus(await run(file, deploy, { env, cwd: checkout }), 3, `${what} run -- exit 3`)
  expectFailedDeployRecorded(what)
}

/** Node `version` from npm's node package, in a folder of its own; returns its bin folder. */
async function nodeOf(version: string): Promise<string> {
  const prefix = join(work, `node-${version}`)
  expectStatus(await npm(['install', '--prefix', prefix, `node@${version}`]), 0, `Node ${version}`)
  return join(prefix, 'node_modules', 'node', 'bin')
}

// 1. The packed package on the oldest Node and on Node 24; refused at once below the minimum.
const packed = await npm(['pack', '--silent', '--pack-destination', work], {}, PROJECT_ROOT)
const tarball = join(work, expectStatus(packed, 0, 'npm pack').stdout.trim().split('\n').at(-1)!)
const global = join(work, 'global')
const installGlobal = ['install', '-g', '--offline', '--prefix', global, tarball]
expectStatus(await npm(installGlobal), 0, 'the packed package installed offline')
const entry = join(global, 'lib', 'node_modules', pkg.name, pkg.bin['change-tracking'])
const node24 = join(PROJECT_ROOT, 'node_modules', '.bin')
for (const [label, bin] of [
  [`Node ${MINIMUM}`, await nodeOf(MINIMUM)],
  ['Node 24', node24]
]) {
  const env = { ...service, PATH: [bin, SYSTEM_PATH].join(delimiter) }
  await exercise([join(bin, 'node'), entry], env, `the packed command line on ${label}`)
}
for (const version of TOO_OLD) {
  const bin = await nodeOf(version)
  const env = { ...service, PATH: [bin, SYSTEM_PATH].join(delimiter) }
  emulator.reset()
  for (const args of [['--version'], ['change'], ['run', '--', 'sh', '-c', 'exit 3']]) {
    const result = await run(join(bin, 'node'), [entry, ...args], { env, cwd: checkout })
    expectStatus(result, 2, `Node ${version}: ${args[0]} refused`)
    const lines = result.stderr.trimEnd().split('\n')
    if (lines.length !== 1 || !lines[0].includes(`needs Node ${MINIMUM} or later`)) {
      throw new Error(`Node ${version}: not one line naming the minimum: ${result.stderr}`)
    }
  }
  if (emulator.requests.length > 0) throw new Error(`Node ${version}: a request was sent`)
}

// 2. From a local registry, with npx, on the system Node, with an empty cache and home.
const registryDir = join(work, 'registry')
mkdirSync(registryDir)
const verdaccioPackage = {
  private: true,
  dependencies: { verdaccio: VERDACCIO },
  overrides: { 'node-fetch': NODE_FETCH_OVERRIDE }
}
writeFileSync(join(registryDir, 'package.json'), JSON.stringify(verdaccioPackage))
expectStatus(await npm(['install', '--ignore-scripts'], {}, registryDir), 0, 'verdaccio installed')
const registryPort = await freePort()
const registry = `http://127.0.0.1:${registryPort}/`
writeFileSync(
  join(registryDir, 'config.yaml'),
  [
    `storage: ${join(registryDir, 'storage')}`,
    'auth:',
    `  htpasswd: { file: ${join(registryDir, 'htpasswd')}, max_users: 10 }`,
    'uplinks: {}',
    "packages: { '**': { access: $all, publish: $authenticated } }",
    'log: { type: stdout, format: pretty, level: warn }'
  ].join('\n')
)
const verdaccio = spawn(
  'node',
  [
    join(registryDir, 'node_modules', 'verdaccio', 'bin', 'verdaccio'),
    '--config',
    join(registryDir, 'config.yaml'),
    '--listen',
    `127.0.0.1:${registryPort}`
  ],
  { env: { ...process.env, PATH: SYSTEM_PATH }, stdio: 'ignore' }
)
try {
  await waitFor(`${registry}-/ping`)
  const user = await fetch(`${registry}-/user/org.couchdb.user:ci`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ci', password: 'ci-password' })
  })
  const { token } = (await user.json()) as { token: string }
  const npmrc = join(work, 'publish.npmrc')
  writeFileSync(npmrc, `//127.0.0.1:${registryPort}/:_authToken=${token}\n`)
  const publish = ['publish', tarball, '--registry', registry, '--userconfig', npmrc]
  expectStatus(await npm(publish), 0, 'published to the local registry')

  const home = join(work, 'home')
  mkdirSync(home)
  const npxUser = {
    ...service,
    PATH: SYSTEM_PATH,
    HOME: home,
    npm_config_cache: join(home, 'npm-cache'),
    npm_config_registry: registry,
    npm_config_update_notifier: 'false'
  }
  const npx = ['-y', `${pkg.name}@${pkg.version}`]
  await exercise(['npx', ...npx], npxUser, 'npx from the registry on the system Node')
  const codeBlocks = readFileSync(GUIDE, 'utf8')
    .split('```')
    .filter((_, i) => i % 2 === 1)
    .join('\n')
  // The guide's npx lines, as written (the deploy a script that succeeds; the service, ours).
  const lines = [...new Set(codeBlocks.match(/npx -y change-tracking-action@\S+ [^'\n]*/g))]
  if (lines.length < 4) throw new Error(`only ${lines.length} distinct npx lines in the guide`)
  for (const line of lines) {
    const words = line.replaceAll('https://api.example.com', emulator.url).split(' ')
    expectStatus(await run(words[0], words.slice(1), { env: npxUser, cwd: checkout }), 0, line)
  }
} finally {
  verdaccio.kill()
}

// 3. The executables: x64 with no Node on PATH, the guide's download lines, arm64 under qemu.
expectStatus(await npm(['run', 'binaries'], {}, PROJECT_ROOT), 0, 'npm run binaries')
const noNode = join(work, 'no-node')
mkdirSync(noNode)
const x64 = executableName('linux-x64')
for (const [name, target] of [
  ['sh', '/bin/sh'],
  ['git', '/usr/bin/git'],
  [x64, join(BINARIES_DIR, x64)]
]) {
  symlinkSync(target, join(noNode, name))
}
const noNodeEnv = { ...service, PATH: noNode }
if ((await run('sh', ['-c', 'command -v node'], { env: noNodeEnv })).status === 0) {
  throw new Error('node is on the PATH without Node')
}
await exercise([x64], noNodeEnv, 'the Linux x64 executable with no Node on PATH')

const downloads = createServer((request, response) => {
  const name = (request.url ?? '/').slice(1)
  if (!readdirSync(BINARIES_DIR).includes(name)) return response.writeHead(404).end()
  createReadStream(join(BINARIES_DIR, name)).pipe(response)
})
await new Promise<void>(listening => downloads.listen(0, '127.0.0.1', listening))
try {
  const base = `http://127.0.0.1:${(downloads.address() as AddressInfo).port}/`
  const block = readFileSync(GUIDE, 'utf8')
    .split('```')
    .find(text => text.includes(`curl -fsSLO ${RELEASE_DOWNLOADS}${x64}`))
  if (block === undefined) throw new Error(`no download of ${x64} in the guide`)
  const commands = block
    .split('\n')
    .map(line => line.trim())
    .filter(line => line.startsWith('- ') && !line.startsWith('- image'))
    .map(line => line.slice(2).replaceAll(RELEASE_DOWNLOADS, base))
  if (!commands.some(line => line.startsWith(`sha256sum -c`) && line.includes(CHECKSUMS))) {
    throw new Error(`the guide does not check ${CHECKSUMS}`)
  }
  const job = join(work, 'job')
  mkdirSync(job)
  for (const name of ['deploy.sh', '.git']) {
    await run('cp', ['-R', join(checkout, name), job])
  }
  emulator.reset()
  const script = ['set -e', ...commands].join('\n')
  const jobEnv = { ...process.env, ...service, PATH: SYSTEM_PATH }
  const downloaded = await run('sh', ['-c', script], { cwd: job, env: jobEnv })
  expectStatus(downloaded, 0, "the guide's download lines")
  if (emulator.requestsTo('POST /v2/change').length !== 1) throw new Error('no change recorded')
} finally {
  downloads.close()
}

const arm64 = join(BINARIES_DIR, executableName('linux-arm64'))
const qemu = { ...service, PATH: SYSTEM_PATH }
const armVersion = await run('qemu-aarch64-static', [arm64, '--version'], { env: qemu })
expectStatus(armVersion, 0, 'the Linux arm64 executable under qemu: --version')
const armChange = [arm64, 'change', '--service', 'web', '--version', 'v1']
expectStatus(await run('qemu-aarch64-static', armChange, { env: qemu }), 0, 'arm64: a change')

await emulator.close()
rmSync(work, { recursive: true, force: true })
process.stdout.write('Every release form installs and records as a user gets it.\n')

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>(listening => server.listen(0, '127.0.0.1', listening))
  const { port } = server.address() as AddressInfo
  await new Promise(closed => server.close(closed))
  return port
}

async function waitFor(url: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise(wait => setTimeout(wait, 200))
  }
  throw new Error(`${url} never answered`)
}

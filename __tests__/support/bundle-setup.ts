/**
 * Jest global setup: builds the action from the current sources with ncc once per run, into a
 * temporary folder that the end-to-end tests run (support/bundle.ts), never the committed dist/,
 * which may be stale. Only when the run includes an end-to-end test: a run of unit tests alone
 * does not pay for the build (about 10 s on a 2-core machine).
 *
 * Jest loads this file without its module mapper, so it imports nothing of the project's own.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** The Node the runner would use (node24), from the "node" devDependency. */
export const NODE_24 = join(PROJECT_ROOT, 'node_modules', '.bin', 'node')
/** Set by the global setup for the tests: the folder the fresh bundle was built into. */
export const BUNDLE_DIR_VARIABLE = 'CTA_TEST_BUNDLE_DIR'
/** Set when the global setup made the folder, so that the teardown removes it. */
export const BUNDLE_OWNED_VARIABLE = 'CTA_TEST_BUNDLE_OWNED'
/** Written into the bundle folder when ncc failed, so that only the tests that need it fail. */
export const BUILD_ERROR_FILE = 'build-error.txt'
/** Written into the bundle folder when the build has ended, either way. */
export const BUILD_DONE_FILE = 'build-done'
const NCC_CLI = join(PROJECT_ROOT, 'node_modules', '@vercel', 'ncc', 'dist', 'ncc', 'cli.js')
/** ncc takes about 10 s on a 2-core machine (type-checking included); a hung build is cut here. */
const MAX_BUILD_MS = 120_000
/** The start of ncc's output kept for a build failure: its type errors come first. */
const MAX_BUILD_LOG_CHARS = 16_000

/** ncc's type errors, without its stack trace; the whole tail of the log when it has none. */
function buildErrors(log: string): string {
  const lines = log.split('\n')
  const errors = lines.flatMap((line, i) =>
    /ERROR in /.test(line) ? [line.replace(/^Error: /, ''), lines[i + 1] ?? ''] : []
  )
  return (errors.length > 0 ? errors : lines.filter(line => !/^\s+at /.test(line))).join('\n')
}

/**
 * Builds src/index.ts with ncc (as `npm run bundle` does) into `outDir`, keeping every file of
 * the output together: ncc splits chunks at dynamic import(). Resolves with the build's duration;
 * on failure writes the reason into the folder instead of throwing.
 */
export function buildBundle(outDir: string): Promise<number> {
  const started = performance.now()
  return new Promise(resolvePromise => {
    const child = spawn(
      NODE_24,
      [NCC_CLI, 'build', join(PROJECT_ROOT, 'src', 'index.ts'), '-o', outDir, '--minify'],
      { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] }
    )
    let log = ''
    const keep = (chunk: Buffer): void => {
      if (log.length < MAX_BUILD_LOG_CHARS) log += chunk.toString('utf8')
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    const timer = setTimeout(() => child.kill('SIGKILL'), MAX_BUILD_MS)
    child.on('close', code => {
      clearTimeout(timer)
      if (code !== 0 || !existsSync(join(outDir, 'index.js'))) {
        writeFileSync(
          join(outDir, BUILD_ERROR_FILE),
          `ncc build of src/index.ts failed (exit ${code}):\n${buildErrors(log)}`
        )
      }
      writeFileSync(join(outDir, BUILD_DONE_FILE), '')
      resolvePromise(performance.now() - started)
    })
  })
}

interface PatternConfig {
  testPathPatterns?: { patterns?: string[] } | string[]
}

/** The end-to-end test files by absolute path. */
function endToEndTests(): string[] {
  const dir = join(PROJECT_ROOT, '__tests__', 'e2e')
  return readdirSync(dir)
    .filter(name => name.endsWith('.test.ts'))
    .map(name => join(dir, name))
}

/** Whether the path patterns given on the command line (if any) select an end-to-end test. */
function runsEndToEnd(config: PatternConfig): boolean {
  const given = config.testPathPatterns
  const patterns = Array.isArray(given) ? given : (given?.patterns ?? [])
  if (patterns.length === 0) return true
  return endToEndTests().some(path =>
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
  // A folder given from outside (a bundle of an older commit, to see a test fail on it) is used
  // as it is, and left in place by the teardown.
  if ((process.env[BUNDLE_DIR_VARIABLE] ?? '') !== '') return
  if (!runsEndToEnd(globalConfig)) return
  const dir = mkdtempSync(join(tmpdir(), 'cta-bundle-'))
  // Test workers and the teardown (same process) read the folder from the environment.
  process.env[BUNDLE_DIR_VARIABLE] = dir
  process.env[BUNDLE_OWNED_VARIABLE] = '1'
  // Not awaited: the unit tests run while the bundle builds, and the end-to-end tests wait for
  // its done file (support/bundle.ts). The teardown waits for it before removing the folder.
  ;(globalThis as { ctaBundleBuild?: Promise<unknown> }).ctaBundleBuild = buildBundle(dir).then(
    ms => {
      if (process.env['CTA_REPORT_BUNDLE_TIME'] !== undefined) {
        process.stderr.write(`\nBundle built in ${(ms / 1000).toFixed(1)} s into ${dir}\n`)
      }
    }
  )
}

/**
 * The bundle the end-to-end tests run: dist/ when it was built from the current sources, else
 * one built by the global setup (bundle-setup.ts) before any test starts, or here, once per
 * worker, when the setup judged the run to have no end-to-end test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BUILD_ERROR_FILE, BUNDLE_DIR_VARIABLE, buildBundle } from './bundle-setup.ts'

/** The action's entry point child processes run. A failed build throws its log. */
export async function actionEntry(): Promise<string> {
  const dir = process.env[BUNDLE_DIR_VARIABLE]
  return join(checked(dir ? dir : await builtHere('src/index.ts')), 'index.js')
}

/** The command line's bundle: dist/cli.cjs, or the one the tests build beside the action's. */
export async function cliEntry(): Promise<string> {
  const dir = process.env[BUNDLE_DIR_VARIABLE]
  if (dir && existsSync(join(dir, 'cli.cjs'))) return join(dir, 'cli.cjs')
  return join(checked(dir ? join(dir, 'cli') : await builtHere('src/cli.ts')), 'index.js')
}

const builds = new Map<string, Promise<string>>()

/** A bundle of `source` built in this worker, once. */
function builtHere(source: string): Promise<string> {
  const build =
    builds.get(source) ??
    (async () => {
      const out = mkdtempSync(join(tmpdir(), 'cta-bundle-'))
      process.on('exit', () => rmSync(out, { recursive: true, force: true }))
      await buildBundle(out, source)
      return out
    })()
  builds.set(source, build)
  return build
}

/** The folder, unless its build failed: then its log is thrown. */
function checked(dir: string): string {
  const failure = join(dir, BUILD_ERROR_FILE)
  if (existsSync(failure)) throw new Error(readFileSync(failure, 'utf8'))
  return dir
}

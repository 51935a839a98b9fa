/**
 * The bundle the end-to-end tests run: built from the current sources by the global setup
 * (bundle-setup.ts), or here when the setup judged the run to have no end-to-end test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import {
  BUILD_DONE_FILE,
  BUILD_ERROR_FILE,
  BUNDLE_DIR_VARIABLE,
  buildBundle,
  NODE_24,
  PROJECT_ROOT
} from './bundle-setup.ts'

export { NODE_24, PROJECT_ROOT }

let lateBuild: Promise<string> | undefined
/** How long a test waits for the background build (its own limit is 120 s). */
const MAX_WAIT_FOR_BUILD_MS = 150_000
const BUILD_POLL_MS = 100

/**
 * The entry point child processes run. Inside Jest it is the fresh bundle of the global setup (or,
 * when the global setup judged that the run had no end-to-end test, one built now, once per
 * process); outside Jest (the demo, the benchmark) dist/index.js. A failed build throws its log.
 */
export async function actionEntry(): Promise<string> {
  let dir = process.env[BUNDLE_DIR_VARIABLE]
  if (dir === undefined || dir === '') {
    if (process.env['JEST_WORKER_ID'] === undefined) return join(PROJECT_ROOT, 'dist', 'index.js')
    lateBuild ??= (async () => {
      const folder = mkdtempSync(join(tmpdir(), 'cta-bundle-'))
      process.on('exit', () => rmSync(folder, { recursive: true, force: true }))
      await buildBundle(folder)
      return folder
    })()
    dir = await lateBuild
  }
  // The global setup builds in the background while the unit tests run.
  const deadline = Date.now() + MAX_WAIT_FOR_BUILD_MS
  while (!existsSync(join(dir, BUILD_DONE_FILE))) {
    if (Date.now() > deadline) throw new Error(`The test bundle in ${dir} was not built in time.`)
    await delay(BUILD_POLL_MS)
  }
  const failure = join(dir, BUILD_ERROR_FILE)
  if (existsSync(failure)) throw new Error(readFileSync(failure, 'utf8'))
  return join(dir, 'index.js')
}

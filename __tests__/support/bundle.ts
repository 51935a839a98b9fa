/**
 * The bundle the end-to-end tests run: built from the current sources by the global setup
 * (bundle-setup.ts), or here when the setup judged the run to have no end-to-end test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  BUILD_ERROR_FILE,
  BUNDLE_DIR_VARIABLE,
  buildBundle,
  NODE_24,
  PROJECT_ROOT
} from './bundle-setup.ts'

export { NODE_24, PROJECT_ROOT }

let lateBuild: Promise<string> | undefined

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
  const failure = join(dir, BUILD_ERROR_FILE)
  if (existsSync(failure)) throw new Error(readFileSync(failure, 'utf8'))
  return join(dir, 'index.js')
}

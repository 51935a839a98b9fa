/**
 * The bundle the end-to-end tests run: built from the current sources by the global setup
 * (bundle-setup.ts) before any test starts, or here, once per worker, when the setup judged the
 * run to have no end-to-end test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BUILD_ERROR_FILE, BUNDLE_DIR_VARIABLE, buildBundle } from './bundle-setup.ts'

let lateBuild: Promise<string> | undefined

/** The entry point child processes run. A failed build throws its log. */
export async function actionEntry(): Promise<string> {
  let dir = process.env[BUNDLE_DIR_VARIABLE]
  if (dir === undefined || dir === '') {
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

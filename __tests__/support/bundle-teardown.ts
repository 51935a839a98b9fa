/** Jest global teardown: removes the folder of the bundle the global setup built. */
import { rmSync } from 'node:fs'

// The names of bundle-setup.ts: Jest loads this file without its module mapper.
const BUNDLE_DIR_VARIABLE = 'CTA_TEST_BUNDLE_DIR'
const BUNDLE_OWNED_VARIABLE = 'CTA_TEST_BUNDLE_OWNED'

export default async function bundleTeardown(): Promise<void> {
  const dir = process.env[BUNDLE_DIR_VARIABLE]
  if (process.env[BUNDLE_OWNED_VARIABLE] !== '1') return
  await (globalThis as { ctaBundleBuild?: Promise<unknown> }).ctaBundleBuild
  if (dir !== undefined && dir !== '') rmSync(dir, { recursive: true, force: true })
}

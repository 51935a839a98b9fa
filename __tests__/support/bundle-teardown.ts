/** Jest global teardown: removes the folder of the bundle the global setup built. */
import { rmSync } from 'node:fs'

// The names of bundle-setup.ts: Jest loads this file without its module mapper.
const BUNDLE_DIR_VARIABLE = 'CTA_TEST_BUNDLE_DIR'
const BUNDLE_OWNED_VARIABLE = 'CTA_TEST_BUNDLE_OWNED'

export default function bundleTeardown(): void {
  const dir = process.env[BUNDLE_DIR_VARIABLE]
  if (process.env[BUNDLE_OWNED_VARIABLE] !== '1' || !dir) return
  rmSync(dir, { recursive: true, force: true })
}

/** Jest global teardown: removes the folders of the bundle and certificate the global setup made. */
import { rmSync } from 'node:fs'

// The names of bundle-setup.ts: Jest loads this file without its module mapper.
const BUNDLE_DIR_VARIABLE = 'CTA_TEST_BUNDLE_DIR'
const BUNDLE_OWNED_VARIABLE = 'CTA_TEST_BUNDLE_OWNED'
const TEST_CERTIFICATE_VARIABLE = 'CTA_TEST_CERTIFICATE_DIR'

export default function bundleTeardown(): void {
  const certificate = process.env[TEST_CERTIFICATE_VARIABLE]
  if (certificate) rmSync(certificate, { recursive: true, force: true })
  const dir = process.env[BUNDLE_DIR_VARIABLE]
  if (process.env[BUNDLE_OWNED_VARIABLE] !== '1' || !dir) return
  rmSync(dir, { recursive: true, force: true })
}

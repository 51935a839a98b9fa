/**
 * The digest of everything a build of dist/ reads. `npm run bundle` writes it beside the bundles;
 * when it matches the sources as they are, the end-to-end tests run dist/ itself, as it ships,
 * instead of building a bundle of their own (a clean clone, as CI's, saves both builds).
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The digest's file in dist/. */
export const DIGEST_FILE = 'sources.sha256'
const BUILD_FILES = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'scripts/bundle.ts',
  'scripts/minify-chunks.ts'
]

export function sourcesDigest(root: string): string {
  const sources = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter(name => name.endsWith('.ts'))
    .map(name => join('src', name))
  const hash = createHash('sha256')
  for (const path of [...BUILD_FILES, ...sources.sort()]) {
    hash
      .update(`${path}\0`)
      .update(readFileSync(join(root, path)))
      .update('\0')
  }
  return `${hash.digest('hex')}\n`
}

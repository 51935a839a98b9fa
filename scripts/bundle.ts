/**
 * Builds both front doors: the action with ncc into dist/ (its entry, and the chunks it loads
 * lazily, each minified), and the command line with esbuild into the one file dist/cli.cjs, which
 * carries every library it uses and runs on Node 20 and later.
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Metafile } from 'esbuild'
import { bundleCommandLine } from './binaries.ts'
import { DIST, PROJECT_ROOT } from './run-bundled-action.ts'
import { DIGEST_FILE, sourcesDigest } from './sources-digest.ts'

const NCC = join(PROJECT_ROOT, 'node_modules', '.bin', 'ncc')
const build = (entry: string, out: string, ...flags: string[]): void => {
  execFileSync(NCC, ['build', entry, '-o', out, '--minify', ...flags], {
    cwd: PROJECT_ROOT,
    stdio: 'inherit'
  })
}

rmSync(DIST, { recursive: true, force: true })
build('src/index.ts', DIST, '--license', 'licenses.txt')
execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'minify-chunks.ts')], {
  stdio: 'inherit'
})

// The command line: one file, its lazily loaded modules in it; the licenses of what it carries.
const metafile = await bundleCommandLine(join(DIST, 'cli.cjs'), '20')
writeFileSync(join(DIST, 'cli-licenses.txt'), licensesOf(metafile))
chmodSync(join(DIST, 'cli.cjs'), 0o755)
// What it was built from: the end-to-end tests run dist/ when it matches the sources.
writeFileSync(join(DIST, DIGEST_FILE), sourcesDigest(PROJECT_ROOT))

/**
 * Each package the bundle carries (its inputs under node_modules), with its license's text, as
 * ncc writes licenses.txt: its name, its license's name, then the text.
 */
function licensesOf(metafile: Metafile): string {
  const folders = new Set(
    Object.keys(metafile.inputs).flatMap(input => {
      const found = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
      return found ? [join(PROJECT_ROOT, found[1])] : []
    })
  )
  return [...folders]
    .sort()
    .map(folder => {
      const { name, license } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
      const file = readdirSync(folder).find(entry => /^licen[cs]e/i.test(entry))
      const text = file ? readFileSync(join(folder, file), 'utf8').trim() : ''
      return `${name}\n${license ?? ''}\n${text}\n`
    })
    .join('\n')
}

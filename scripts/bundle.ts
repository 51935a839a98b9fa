/**
 * Builds both front doors with ncc: the action into dist/ (its entry, and the chunks it loads
 * lazily, each minified), and the command line into the one file dist/cli.js, which carries
 * every library it uses and runs on Node 20 and later.
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

const cli = mkdtempSync(join(tmpdir(), 'cta-cli-'))
build('src/cli.ts', cli, '--license', 'licenses.txt')
renameSync(join(cli, 'index.js'), join(DIST, 'cli.js'))
renameSync(join(cli, 'licenses.txt'), join(DIST, 'cli-licenses.txt'))
chmodSync(join(DIST, 'cli.js'), 0o755)
rmSync(cli, { recursive: true, force: true })
// What it was built from: the end-to-end tests run dist/ when it matches the sources.
writeFileSync(join(DIST, DIGEST_FILE), sourcesDigest(PROJECT_ROOT))

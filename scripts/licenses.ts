/**
 * Writes dist/licenses.txt: the license of every runtime dependency bundled into dist/.
 * ncc's own --license misses packages imported by file path (src/runner.ts does that for
 * @actions/core), so the list comes from package.json's dependencies instead.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>
}
const sections = Object.keys(pkg.dependencies)
  .sort()
  .map(name => {
    const dir = join('node_modules', name)
    const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      version: string
      license?: string
    }
    const file = readdirSync(dir).find(entry => /^licen[cs]e/i.test(entry))
    if (!file) throw new Error(`${name} ships no license file`)
    const text = readFileSync(join(dir, file), 'utf8').trim()
    return `${name}@${meta.version}\n${meta.license ?? 'see below'}\n${text}`
  })
writeFileSync(join('dist', 'licenses.txt'), `${sections.join('\n\n')}\n`)

/**
 * npm run docs: regenerate the guides' generated tables (inputs, outputs, the command line's flags,
 * risk categories) from action.yml and the code.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { GUIDES, renderGuide } from './docs-tables.ts'

const actionYaml = readFileSync('action.yml', 'utf8')
for (const path of GUIDES) {
  const guide = readFileSync(path, 'utf8')
  const updated = renderGuide(guide, actionYaml)
  if (updated !== guide) {
    writeFileSync(path, updated)
    console.log(`${path}: tables regenerated.`)
  }
}

/** npm run docs: regenerate the README's generated tables (inputs, outputs, risk categories). */
import { readFileSync, writeFileSync } from 'node:fs'
import { renderReadme } from './readme-tables.ts'

const readme = readFileSync('README.md', 'utf8')
const updated = renderReadme(readme, readFileSync('action.yml', 'utf8'))
if (updated === readme) {
  console.log('README.md tables are up to date.')
} else {
  writeFileSync('README.md', updated)
  console.log('README.md tables regenerated from action.yml.')
}

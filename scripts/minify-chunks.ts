/**
 * ncc minifies the entry it builds, but not the chunks it splits off at dynamic import()s: those
 * hold most of the code once the entry loads the run lazily. This minifies each chunk in dist/
 * with terser, as ESM, so the bundle stays small and quick to parse.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { minify } from 'terser'
import { DIST } from './run-bundled-action.ts'

for (const name of readdirSync(DIST).filter(file => /^\d+\.index\.js$/.test(file))) {
  const path = join(DIST, name)
  const result = await minify(readFileSync(path, 'utf8'), {
    module: true,
    compress: true,
    mangle: true,
    format: { comments: false }
  })
  if (result.code === undefined) throw new Error(`terser produced nothing for ${name}`)
  writeFileSync(path, result.code)
}

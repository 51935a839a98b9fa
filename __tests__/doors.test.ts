/**
 * Two front doors over one core: the action (src/action/) and the command line (src/cli/) each
 * read their own world into the shared settings and run data. The core imports neither door, and
 * neither door imports the other; only the entry files pick one.
 */
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SRC = join(ROOT, 'src')
const DOORS = ['src/action/', 'src/cli/']
const ENTRIES = new Set(['src/index.ts', 'src/main.ts', 'src/cli.ts'])

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap(entry => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** Every project file a source imports, statically or with import(), as a path from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)]
  return specifiers.map(([, specifier]) => relative(ROOT, resolve(dirname(file), specifier)))
}

const doorOf = (path: string): string | undefined => DOORS.find(door => path.startsWith(door))

describe('the doors', () => {
  const edges = sources(SRC).flatMap(file => {
    const from = relative(ROOT, file)
    return importsOf(file).map(to => ({ from, to }))
  })

  it('are found: the check reads the imports of the core and of each door', () => {
    expect(edges.some(({ from, to }) => from === 'src/main.ts' && doorOf(to))).toBe(true)
    expect(edges.some(({ from }) => from.startsWith('src/commands/'))).toBe(true)
  })

  it('are imported by no part of the core, only by the entry files', () => {
    const crossing = edges.filter(
      ({ from, to }) => doorOf(to) && !doorOf(from) && !ENTRIES.has(from)
    )
    expect(crossing).toEqual([])
  })

  it('never import each other', () => {
    const between = edges.filter(
      ({ from, to }) => doorOf(from) && doorOf(to) && doorOf(from) !== doorOf(to)
    )
    expect(between).toEqual([])
  })
})

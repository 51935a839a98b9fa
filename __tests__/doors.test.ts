/**
 * Three doors over one core: the action (src/action/), the command line (src/cli/) and the
 * receiver (src/serve/) each read their own world into the shared settings and run data. The core
 * imports no door, and no door imports another; only the entry files pick one. And the tests mirror the tree: a
 * reader finds a source's tests in the test file of its name.
 */
import { describe, expect, it } from '@jest/globals'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const SRC = join(ROOT, 'src')
const DOORS = ['src/action/', 'src/cli/', 'src/serve/']
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

/** A source of at least this many lines that defines functions has a test file of its name. */
const LINES_THAT_NEED_A_TEST_FILE = 100

/** Whether a source defines something to run: a function, an arrow, a method, an accessor. */
function definesFunctions(text: string): boolean {
  const defines = (node: ts.Node): boolean =>
    (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined) ||
    ts.forEachChild(node, child => defines(child) || undefined) === true
  return defines(ts.createSourceFile('source.ts', text, ts.ScriptTarget.Latest))
}

function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
}

/** src/x/y.ts's tests: __tests__/x/y.test.ts. */
const testFileOf = (path: string): string =>
  join(ROOT, '__tests__', relative(SRC, path).replace(/\.ts$/, '.test.ts'))

describe('the tests', () => {
  it('tell a source that defines functions from one of types and constants alone', () => {
    expect(
      definesFunctions('export type Read = (name: string) => string\ninterface A { b(): void }')
    ).toBe(false)
    expect(definesFunctions('export const NAMES = { api: "api-key" }')).toBe(false)
    expect(definesFunctions('export const read = (name: string) => name')).toBe(true)
    expect(definesFunctions('export class A { get b() { return 1 } }')).toBe(true)
    expect(definesFunctions('function a() {}')).toBe(true)
  })

  it(`are in a file of its name for each source of ${LINES_THAT_NEED_A_TEST_FILE} lines or more that defines functions`, () => {
    const checked = sources(SRC).filter(file => {
      const text = readFileSync(file, 'utf8')
      return lineCount(text) >= LINES_THAT_NEED_A_TEST_FILE && definesFunctions(text)
    })
    expect(checked.map(file => relative(ROOT, file))).toContain('src/report.ts')
    const untested = checked.filter(file => !existsSync(testFileOf(file)))
    expect(untested.map(file => relative(ROOT, file))).toEqual([])
  })
})

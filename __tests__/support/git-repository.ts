/**
 * Real git repositories for tests, in a temporary folder: git with no system or user
 * configuration, and each commit an hour after the one before, from a fixed date.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** The variables git runs with here: nothing of the machine's own configuration. */
export function gitEnv(home: string): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Alice',
    GIT_AUTHOR_EMAIL: 'alice@example.com',
    GIT_COMMITTER_NAME: 'CI',
    GIT_COMMITTER_EMAIL: 'ci@example.com',
    LC_ALL: 'C'
  }
}

export class TestRepository {
  private clock = Date.parse('2026-03-02T09:00:00Z')

  readonly path: string
  readonly env: Record<string, string>

  /** A new repository on branch main at `path`, git running with `env` (see gitEnv). */
  constructor(path: string, env: Record<string, string>) {
    this.path = path
    this.env = env
    mkdirSync(path, { recursive: true })
    this.git(['init', '-q', '-b', 'main'])
  }

  /** What git printed, trimmed; `extra` variables over the repository's. */
  git(args: string[], input?: string | Buffer, extra: Record<string, string> = {}): string {
    return execFileSync('git', args, {
      cwd: this.path,
      input,
      env: { ...this.env, ...extra },
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe']
    }).trim()
  }

  /** Writes the files (null removes one) and commits them, an hour later, as `author`. */
  commit(message: string, files: Record<string, string | null>, author = 'Alice'): string {
    for (const [file, text] of Object.entries(files)) {
      const path = join(this.path, file)
      if (text === null) rmSync(path)
      else {
        mkdirSync(dirname(path), { recursive: true })
        writeFileSync(path, text)
      }
    }
    this.git(['add', '-A'])
    return this.dated(['commit', '-q', '-F', '-'], message, author)
  }

  /**
   * Commits on main after HEAD by git fast-import, each an hour later, with the files of HEAD,
   * as `author`: a message of any size (a Buffer of 50 MB) goes to git as it is, copied once into
   * the stream. Their SHAs, oldest first.
   */
  importCommits(messages: (string | Buffer)[], author = 'Alice'): string[] {
    const parent = this.git(['rev-parse', 'HEAD'])
    const stream = messages.flatMap((message, i) => {
      this.clock += 3_600_000
      const seconds = this.clock / 1000
      const header = [
        'commit refs/heads/main',
        `author ${author} <alice@example.com> ${seconds} +0000`,
        `committer CI <ci@example.com> ${seconds} +0000`,
        `data ${Buffer.byteLength(message)}\n`
      ]
      const from = i === 0 ? `from ${parent}\n` : ''
      const body = typeof message === 'string' ? Buffer.from(message) : message
      return [Buffer.from(header.join('\n')), body, Buffer.from(`\n${from}\n`)]
    })
    // Kept as the pack git wrote: unpacking a few objects would compress each one again.
    this.git(['-c', 'fastimport.unpackLimit=0', 'fast-import', '--quiet'], Buffer.concat(stream))
    return this.git(['rev-list', '--reverse', `${parent}..main`]).split('\n')
  }

  /** A git command that commits or tags, an hour later, as `author`; the new HEAD. */
  dated(args: string[], input?: string, author = 'Alice'): string {
    const date = new Date((this.clock += 3_600_000)).toISOString()
    this.git(args, input, {
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
      GIT_AUTHOR_NAME: author
    })
    return this.git(['rev-parse', 'HEAD'])
  }
}

/** The command line's terminal and files: lines to standard error, outputs a shell can source. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { outputsDotenv, Terminal, writeFiles } from '../../src/cli/terminal.ts'
import { Redactor } from '../../src/redact.ts'
import { MAX_MESSAGE_CHARS, safeLine } from '../../src/report.ts'

const same = (text: string, prefix = ''): string => `${prefix}${text}`

describe('outputsDotenv', () => {
  it('names each output in capitals with _, and percent-encodes every character a shell acts on', () => {
    const outputs = new Map([
      ['change-id', 'c-1_a.b,c:d/e@f+g=h'],
      ['error', 'it said: $(id) `id` "q" \'q\' \\ %25 é\nX=1; #']
    ])
    expect(outputsDotenv(outputs)).toBe(
      'CHANGE_ID=c-1_a.b,c:d/e@f+g=h\n' +
        'ERROR=it%20said:%20%24%28id%29%20%60id%60%20%22q%22%20%27q%27%20%5C%20%2525%20%C3%A9%0AX=1%3B%20%23\n'
    )
  })

  it('gives values a shell reads back exactly, once decoded, running nothing', () => {
    const hostile = `$(touch /tmp/never) \`id\` "a" 'b' \\ \u001b[31m\u2028 ; # x`
    const file = join(mkdtempSync(join(tmpdir(), 'cta-env-')), 'outputs.env')
    const terminal = new Terminal(() => {}, same)
    terminal.setOutput('error', hostile)
    writeFiles(terminal, { outputs: file })
    const read = execFileSync('sh', ['-c', `set -a; . "${file}"; printf %s "$ERROR"`], {
      encoding: 'utf8'
    })
    expect(decodeURIComponent(read)).toBe(hostile)
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(2)
  })
})

describe('Terminal', () => {
  it('writes one line per message, with its kind, and debug lines only when asked', () => {
    const lines: string[] = []
    for (const debugOn of [false, true]) {
      const terminal = new Terminal(line => lines.push(line), same, debugOn)
      terminal.info('done')
      terminal.warning('careful')
      terminal.debug('detail')
    }
    expect(lines).toEqual(['done', 'warning: careful', 'done', 'warning: careful', 'debug: detail'])
  })

  it('redacts, makes inert and cuts every line, debug lines and the door’s own included', () => {
    const redactor = new Redactor()
    redactor.add('the-api-key')
    const lines: string[] = []
    const terminal = new Terminal(
      line => lines.push(line),
      (text, prefix) => safeLine(redactor, text, { prefix }),
      true
    )
    terminal.debug('user: the-api-key (from GITLAB_USER_LOGIN)')
    terminal.debug('service: acme/%1B[2J\u001b[2J\u202e##[error]x')
    terminal.error('The deploy command "x\u2028##[error]y" was not found.')
    terminal.debug(`user: ${'u'.repeat(120_000)}`)
    expect(lines.join('\n')).not.toContain('the-api-key')
    expect(lines[0]).toBe('debug: user: *** (from GITLAB_USER_LOGIN)')
    for (const line of lines) {
      expect(line).not.toMatch(/[\p{Cc}\u2028\u202e]|##\[/u)
      expect(Array.from(line).length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS)
    }
  })

  it('says a file it cannot write, and goes on: a warning, or an error the policy counts', () => {
    for (const fails of [false, true]) {
      const lines: string[] = []
      const terminal = new Terminal(line => lines.push(line), same)
      expect(writeFiles(terminal, { summary: '/nonexistent/summary.md' }, fails)).toBe(false)
      const kind = fails ? 'error' : 'warning'
      expect(lines).toEqual([
        `${kind}: --summary "/nonexistent/summary.md" could not be written (ENOENT).`
      ])
    }
  })
})

describe('the output files: only regular files are written or removed', () => {
  let folder: string
  let outside: string
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'cta-files-'))
    outside = join(folder, 'outside.txt')
    writeFileSync(outside, 'not ours')
  })
  afterEach(() => rmSync(folder, { recursive: true, force: true }))

  /** Writes each of --outputs, --summary and --cdevent at `path`, with or without an event. */
  function writeAt(path: string, event?: string): { lines: string[]; written: boolean } {
    const lines: string[] = []
    const terminal = new Terminal(line => lines.push(line), same)
    terminal.setOutput('change-id', 'chg-1')
    if (event) terminal.setOutput('cdevent', event)
    const written = writeFiles(terminal, { outputs: path, summary: path, cdevent: path }, true)
    return { lines, written }
  }

  it('writes a new file and replaces a regular one, whole', () => {
    const path = join(folder, 'out.txt')
    writeFileSync(path, 'x'.repeat(1000))
    expect(writeAt(path, '{"e":1}')).toEqual({ lines: [], written: true })
    expect(readFileSync(path, 'utf8')).toBe('{"e":1}\n')
  })

  it('never writes through a symbolic link, nor removes one: one warning per flag', () => {
    const link = join(folder, 'cdevents.ndjson')
    symlinkSync(outside, link)
    for (const event of ['{"e":1}', undefined]) {
      const { lines, written } = writeAt(link, event)
      expect(written).toBe(true)
      const flags = lines.filter(line => line.includes('symbolic link, which is never followed'))
      expect(flags).toHaveLength(3)
      expect(readFileSync(outside, 'utf8')).toBe('not ours')
      expect(lstatSync(link).isSymbolicLink()).toBe(true)
    }
  })

  it('neither waits on a FIFO nobody reads nor writes into it, and never removes it', () => {
    const fifo = join(folder, 'fifo')
    execFileSync('mkfifo', [fifo])
    for (const event of ['{"e":1}', undefined]) {
      const { lines } = writeAt(fifo, event)
      expect(lines.filter(line => line.includes('not a regular file'))).toHaveLength(3)
      expect(lstatSync(fifo).isFIFO()).toBe(true)
    }
  })

  it('writes nothing into a socket, and leaves it', async () => {
    const path = join(folder, 'socket')
    const server = createServer().listen(path)
    await once(server, 'listening')
    try {
      expect(
        writeAt(path, '{"e":1}').lines.filter(line => line.includes('not a regular file'))
      ).toHaveLength(3)
      expect(lstatSync(path).isSocket()).toBe(true)
    } finally {
      server.close()
    }
  })

  // Making a device node needs root: as root (CI's containers), in this test's own folder.
  const asRoot = process.getuid?.() === 0 ? it : it.skip
  asRoot('never removes or writes a device (a null device made in a temporary folder)', () => {
    const device = join(folder, 'null')
    execFileSync('mknod', ['-m', '666', device, 'c', '1', '3'])
    for (const event of [undefined, '{"e":1}']) {
      expect(
        writeAt(device, event).lines.filter(line => line.includes('not a regular file'))
      ).toHaveLength(3)
      expect(lstatSync(device).isCharacterDevice()).toBe(true)
    }
  })

  it('removes a regular file at the --cdevent path when there is no event: it is not sent again', () => {
    const path = join(folder, 'cdevents.ndjson')
    writeFileSync(path, '{"old":1}\n')
    const lines: string[] = []
    writeFiles(new Terminal(line => lines.push(line), same), { cdevent: path })
    expect(existsSync(path)).toBe(false)
    expect(lines).toEqual(['warning: No CDEvent: no change was recorded.'])
  })
})

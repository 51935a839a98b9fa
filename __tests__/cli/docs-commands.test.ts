/**
 * Every `change-tracking` command line the docs show (shell, GitLab and Jenkins blocks) runs, in a
 * dry run against the emulator, in a GitLab job's context, with the deploy replaced by `true`: a
 * copied line is a line that works.
 */
import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import type { Emulator } from '../../emulator/emulator.ts'
import { GUIDES } from '../../scripts/docs-tables.ts'
import { gitlabJob } from '../../scripts/run-bundled-action.ts'
import { main } from '../../src/cli/main.ts'
import { useEmulator } from '../support/use-emulator.ts'

let emulator: Emulator
useEmulator(started => {
  emulator = started
})

/** The command lines of the docs' code blocks, each with where it stands. */
const lines = GUIDES.flatMap(path =>
  [...readFileSync(path, 'utf8').matchAll(/```(?:sh|yaml|groovy)\n([\s\S]*?)```/g)].flatMap(
    ([, block]) =>
      [
        ...block.matchAll(
          /change-tracking (?:run|change|heartbeat|events|event-results|get-change|hello)\b[^'\n]*/g
        )
      ].map(([line]) => [path, line] as const)
  )
)

/** Words as a shell splits them, for the quoting the docs use ('…' and "…"). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map(m => m[1] ?? m[2] ?? m[3])
}

describe('the command lines in the docs', () => {
  it('are found', () => {
    expect(lines.length).toBeGreaterThanOrEqual(4)
  })

  it.each(lines)('%s: %s runs in a dry run', async (_path, line) => {
    const [, ...args] = words(line.replaceAll('https://api.example.com', emulator.url))
    const end = args.indexOf('--')
    const argv = end === -1 ? args : [...args.slice(0, end), '--dry-run', '--', 'true']
    const stderr: string[] = []
    // As the GitLab example's `variables:` set it: commander reads a flag's variable from the process.
    process.env['CHANGE_TRACKING_BASE_URL'] = emulator.url
    const status = await main(
      end === -1 ? [...argv, '--dry-run'] : argv,
      {
        ...gitlabJob(),
        CHANGE_TRACKING_API_KEY: emulator.apiKey,
        CHANGE_TRACKING_BASE_URL: emulator.url
      },
      { stdout: () => {}, stderr: text => stderr.push(text), cwd: tmpdir() }
    )
    delete process.env['CHANGE_TRACKING_BASE_URL']
    expect(stderr.filter(text => text.startsWith('error:'))).toEqual([])
    expect(status).toBe(0)
    expect(stderr.join('\n')).toContain('[dry-run]')
    expect(emulator.requests).toEqual([])
  })
})

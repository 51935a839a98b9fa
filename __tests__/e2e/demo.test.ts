/**
 * The README's first command, `npm run demo`, on the bundles built from the current sources: it
 * checks each of its own steps and exits 0 only when every one did what it says.
 */
import { expect, it } from '@jest/globals'
import { join } from 'node:path'
import { actionEntry, cliEntry } from '../support/bundle.ts'
import { PROJECT_ROOT, spawnNode } from '../support/run-action.ts'

it('runs the demo to its end, every step as it should', async () => {
  const demo = join(PROJECT_ROOT, 'scripts', 'demo.ts')
  const run = await spawnNode(
    [demo, await actionEntry(), await cliEntry()],
    process.env,
    PROJECT_ROOT
  )
  expect(run.stdout).toContain('The demo ran as it should')
  expect(run.exitCode).toBe(0)
})

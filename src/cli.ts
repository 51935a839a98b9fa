#!/usr/bin/env node
/**
 * The command line's entry (`change-tracking`). On a Node older than package.json's `engines`
 * names it exits 2 at once with one line, having run and recorded nothing, instead of failing later
 * in a way that reads as an outage. Only then is the command line loaded, by an import() (a static
 * import would be hoisted before the check). No top-level await: the standalone executables
 * bundle this entry as CommonJS.
 */
import pkg from '../package.json' with { type: 'json' }

/** `>=20.18.0` as [20, 18, 0], `v20.9.0` as [20, 9, 0]. */
const partsOf = (version: string): number[] => version.replace(/^\D*/, '').split('.').map(Number)
const [oldest, found] = [pkg.engines.node, process.version].map(partsOf)
const differs = oldest.findIndex((part, i) => (found[i] ?? 0) !== part)

if (differs !== -1 && (found[differs] ?? 0) < oldest[differs]) {
  process.stderr.write(
    `error: change-tracking needs Node ${oldest.join('.')} or later, and this is Node ` +
      `${found.join('.')}: nothing was run or recorded. Install a newer Node, or the ` +
      `standalone executable, which needs none.\n`
  )
  // The failure policy's status for a command line that cannot run.
  process.exitCode = 2
} else {
  void start()
}

async function start(): Promise<void> {
  const argv = process.argv.slice(2)
  const io = {
    stdout: (text: string | Uint8Array) => process.stdout.write(text),
    stderr: (line: string) => process.stderr.write(`${line}\n`),
    cwd: process.cwd()
  }
  // The receiver is a door of its own, loaded only for `serve`.
  if (argv[0] === 'serve') {
    const { serve } = await import('./serve/main.ts')
    process.exitCode = await serve(argv.slice(1), process.env, io)
    return
  }
  const { main } = await import('./cli/main.ts')
  process.exitCode = await main(argv, process.env, io)
}

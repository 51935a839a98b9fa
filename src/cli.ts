#!/usr/bin/env node
/**
 * The command line's entry (`change-tracking`). It first checks the Node it runs on against the
 * oldest that package.json's `engines` names: on an older one it exits 2 at once with one line,
 * having run and recorded nothing, instead of failing later in a way that reads as an outage. Only
 * then does it load the command line (an import() made after the check: a static import would be
 * hoisted and run before it), so nothing that an older Node may not run is run.
 *
 * What the action loads lazily (its own chunks) is placed in this one file too, but still run only
 * when a command needs it: these imports are never made, and make the bundler keep the modules
 * here instead of in files of their own. No top-level await: the standalone executables bundle
 * this entry as CommonJS.
 */
import pkg from '../package.json' with { type: 'json' }

/** The status of a command line that cannot run (the failure policy's first row). */
const CANNOT_RUN = 2

/** `>=20.18.0` as [20, 18, 0]. */
const oldest = pkg.engines.node
  .replace(/^>=\s*/, '')
  .split('.')
  .map(Number)
const found = process.version.replace(/^v/, '').split('.').map(Number)
const differs = oldest.findIndex((part, i) => (found[i] ?? 0) !== part)

if (differs !== -1 && (found[differs] ?? 0) < oldest[differs]) {
  process.stderr.write(
    `error: change-tracking needs Node ${oldest.join('.')} or later, and this is Node ` +
      `${found.join('.')}: nothing was run or recorded. Install a newer Node, or the ` +
      `standalone executable, which needs none.\n`
  )
  process.exitCode = CANNOT_RUN
} else {
  void start()
}

async function start(): Promise<void> {
  if (process.exitCode === -1) {
    await import(/* webpackMode: "eager" */ './commands/events.ts')
    await import(/* webpackMode: "eager" */ './commands/services.ts')
    await import(/* webpackMode: "eager" */ './affected-services.ts')
    await import(/* webpackMode: "eager" */ 'picomatch')
  }
  const { main } = await import(/* webpackMode: "eager" */ './cli/main.ts')
  process.exitCode = await main(process.argv.slice(2), process.env, {
    stdout: text => process.stdout.write(text),
    stderr: line => process.stderr.write(`${line}\n`),
    cwd: process.cwd()
  })
}

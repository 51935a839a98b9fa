#!/usr/bin/env node
/**
 * The command line's entry (`change-tracking`). What the action loads lazily (its own chunks) is
 * placed in this one file too, but still run only when a command needs it: these imports are
 * never made, and make the bundler keep the modules here instead of in files of their own.
 */
import { main } from './cli/main.ts'

if (process.exitCode === -1) {
  await import(/* webpackMode: "eager" */ './commands/events.ts')
  await import(/* webpackMode: "eager" */ './commands/services.ts')
  await import(/* webpackMode: "eager" */ './affected-services.ts')
  await import(/* webpackMode: "eager" */ 'picomatch')
}

process.exitCode = await main(process.argv.slice(2), process.env, {
  stdout: text => process.stdout.write(text),
  stderr: line => process.stderr.write(`${line}\n`),
  cwd: process.cwd()
})

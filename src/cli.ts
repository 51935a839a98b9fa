#!/usr/bin/env node
/**
 * The command line's entry (`change-tracking`). What the action loads lazily is imported here at
 * once, so that the bundle is one file: a command line starts once per deploy, not per job step.
 */
import './commands/events.ts'
import './commands/services.ts'
import './affected-services.ts'
import { main } from './cli/main.ts'

process.exitCode = await main(process.argv.slice(2), process.env, {
  stdout: text => process.stdout.write(text),
  stderr: line => process.stderr.write(`${line}\n`),
  cwd: process.cwd()
})

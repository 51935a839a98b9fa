/**
 * Runs the service emulator on its own, e.g. for a manual or end-to-end run of the bundled action:
 *
 *   node scripts/emulator.ts [--port N] [--host H] [--api-key K] [--cert-out path]
 *                            [--heartbeat-monitor ID ...] [--ready-file path]
 *
 * When it listens it prints one JSON line {"url", "port", "certPath", "apiKey"} to stdout (and
 * writes it to --ready-file). Trust the certificate with NODE_EXTRA_CA_CERTS=<certPath>.
 * It runs until SIGINT or SIGTERM.
 */
import { renameSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Emulator } from './emulator.ts'
import { testCertificate } from './tls.ts'

const USAGE =
  'usage: node scripts/emulator.ts [--port N] [--host H] [--api-key K] [--cert-out path] ' +
  '[--heartbeat-monitor ID ...] [--ready-file path]'

interface LauncherOptions {
  port: number
  host?: string
  apiKey?: string
  certOut?: string
  heartbeatMonitors: string[]
  readyFile?: string
}

function parseOptions(args: string[]): LauncherOptions {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string' },
      'api-key': { type: 'string' },
      'cert-out': { type: 'string' },
      'heartbeat-monitor': { type: 'string', multiple: true, default: [] },
      'ready-file': { type: 'string' }
    }
  })
  const port = Number(values.port)
  if (!/^\d+$/.test(values.port) || port > 65535) {
    throw new Error(`--port must be a port number from 0 to 65535, got "${values.port}"`)
  }
  if (values['api-key'] === '') throw new Error('--api-key must not be empty')
  return {
    port,
    host: values.host,
    apiKey: values['api-key'],
    certOut: values['cert-out'],
    heartbeatMonitors: values['heartbeat-monitor'],
    readyFile: values['ready-file']
  }
}

async function main(): Promise<void> {
  let options: LauncherOptions
  try {
    options = parseOptions(process.argv.slice(2))
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`)
    process.exitCode = 2
    return
  }

  const cert = await testCertificate()
  let certPath = cert.certPath
  if (options.certOut) {
    certPath = resolve(options.certOut)
    writeFileSync(certPath, cert.cert)
  }
  const emulator = await Emulator.start({
    cert,
    port: options.port,
    host: options.host,
    apiKey: options.apiKey
  })
  for (const id of options.heartbeatMonitors) emulator.addHeartbeatMonitor(id)

  const ready = JSON.stringify({
    url: emulator.url,
    port: emulator.port,
    certPath,
    apiKey: emulator.apiKey
  })
  if (options.readyFile) {
    // Written whole, then renamed: whoever polls for the file never reads half of it.
    const partial = `${options.readyFile}.partial`
    writeFileSync(partial, `${ready}\n`)
    renameSync(partial, options.readyFile)
  }
  process.stdout.write(`${ready}\n`)

  const stop = (): void => {
    void emulator.close().then(() => process.exit(0))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((error: unknown) => {
  console.error(`the emulator did not start: ${error instanceof Error ? error.message : error}`)
  process.exit(1)
})

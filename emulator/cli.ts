/**
 * npm run emulator: the service emulator on its own, for a manual or end-to-end run of the bundled
 * action. `npm run emulator -- --help` lists the options.
 */
import { renameSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { DEFAULT_API_KEY, Emulator } from './emulator.ts'
import { testCertificate } from './tls.ts'

const HELP = `usage: npm run emulator -- [options]   (or: node emulator/cli.ts [options])

Runs an HTTPS emulator of the change-tracking service on this machine, with a test certificate
made at start, until SIGINT or SIGTERM. When it listens it prints one JSON line
{"url", "port", "certPath", "apiKey"}, then one line per request it receives (method, path,
status). Trust the certificate with NODE_EXTRA_CA_CERTS=<certPath>.

options:
  --port N                   port to listen on (default 0: any free port)
  --host H                   address to listen on (default 127.0.0.1)
  --api-key K                the key the service accepts (default ${DEFAULT_API_KEY})
  --heartbeat-monitor ID     a heartbeat monitor that accepts signals; repeat for several
                             (without one, POST /v1/heartbeat/<id> answers 404)
  --cert-out PATH            also write the certificate (PEM) to PATH
  --ready-file PATH          also write the JSON line to PATH once listening
  --help                     print this help and exit

example, with heartbeats:
  npm run emulator -- --port 8443 --heartbeat-monitor nightly --cert-out /tmp/emulator.pem
  then run the action with NODE_EXTRA_CA_CERTS=/tmp/emulator.pem, base-url
  https://localhost:8443/, api-key ${DEFAULT_API_KEY} and heartbeat-id nightly.`

interface LauncherOptions {
  help: boolean
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
      'ready-file': { type: 'string' },
      help: { type: 'boolean', default: false }
    }
  })
  const port = Number(values.port)
  if (!/^\d+$/.test(values.port) || port > 65535) {
    throw new Error(`--port must be a port number from 0 to 65535, got "${values.port}"`)
  }
  if (values['api-key'] === '') throw new Error('--api-key must not be empty')
  return {
    help: values.help,
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
    const message = error instanceof Error ? error.message : String(error)
    console.error(`${message}\nRun with --help for the options.`)
    process.exitCode = 2
    return
  }
  if (options.help) {
    console.log(HELP)
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
    apiKey: options.apiKey,
    log: line => process.stdout.write(`${line}\n`)
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

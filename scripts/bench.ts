/**
 * npm run bench: the action's figures, measured against minimal baselines on this machine.
 *
 * 1. Cold start: `node dist/index.js` recording one change, against a minimal script doing the
 *    same single HTTPS POST; the median of interleaved runs each.
 * 2. The total JS size of dist/.
 * 3. Streaming 100,000 NDJSON events of about 300 bytes from a file, against a minimal sequential
 *    batch sender reading the same file; and the action's peak RSS for 100,000 against 10,000 events.
 *
 * The figures are printed and written into the README between the bench markers.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createWriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { Emulator } from '../emulator/emulator.ts'
import {
  PROJECT_ROOT,
  runAction,
  runnerContext,
  spawnNode
} from '../__tests__/support/run-action.ts'
import { testCertificate } from '../emulator/tls.ts'

const COLD_START_RUNS = 11
const STREAM_EVENTS = 100_000
const SMALL_STREAM_EVENTS = 10_000
const STREAM_RUNS = 5
const EVENT_BYTES = 300

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
const ms = (value: number): string => `${value.toFixed(0)} ms`

async function timed(args: string[], env: Record<string, string | undefined>, cwd: string) {
  const started = performance.now()
  const result = await spawnNode(args, env, cwd, 600_000)
  if (result.exitCode !== 0)
    throw new Error(`${args.join(' ')} failed:\n${result.stdout}${result.stderr}`)
  return performance.now() - started
}

async function writeEvents(path: string, count: number): Promise<void> {
  const out = createWriteStream(path)
  for (let i = 0; i < count; i++) {
    const line = JSON.stringify({ name: 'bench.event', data: { i, pad: '' } })
    const padded = line.replace('"pad":""', `"pad":"${'x'.repeat(EVENT_BYTES - line.length)}"`)
    if (!out.write(padded + '\n')) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
}

function distSize(): number {
  const dist = join(PROJECT_ROOT, 'dist')
  return readdirSync(dist)
    .filter(name => name.endsWith('.js'))
    .reduce((total, name) => total + statSync(join(dist, name)).size, 0)
}

async function main(): Promise<void> {
  const certificate = await testCertificate()
  const emulator = await Emulator.start({ cert: certificate })
  const work = mkdtempSync(join(tmpdir(), 'cta-bench-'))
  const baseEnv = {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    ...runnerContext(work),
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    BASE_URL: emulator.url,
    API_KEY: emulator.apiKey
  }
  const inputs = { 'api-key': emulator.apiKey, 'base-url': emulator.url, 'job-summary': 'false' }
  try {
    // 1. Cold start, interleaved so that machine noise hits both sides alike.
    const actionTimes: number[] = []
    const baselineTimes: number[] = []
    const baseline = join(PROJECT_ROOT, 'scripts', 'bench-baseline-post.mjs')
    for (let run = 0; run < COLD_START_RUNS; run++) {
      const result = await runAction({ inputs, caCertPath: certificate.certPath })
      if (result.exitCode !== 0) throw new Error(`the action failed:\n${result.stdout}`)
      actionTimes.push(result.durationMs)
      baselineTimes.push(await timed([baseline], baseEnv, work))
    }
    const coldAction = median(actionTimes)
    const coldBaseline = median(baselineTimes)

    // 2. Bundle size.
    const bundleBytes = distSize()

    // 3. Streaming events from a file.
    const bigFile = join(work, 'events-100k.ndjson')
    const smallFile = join(work, 'events-10k.ndjson')
    await writeEvents(bigFile, STREAM_EVENTS)
    await writeEvents(smallFile, SMALL_STREAM_EVENTS)
    const rssProbe = join(PROJECT_ROOT, 'scripts', 'report-rss.mjs')
    const rssFile = join(work, 'rss')
    const streamAction = async (file: string) => {
      emulator.reset()
      const result = await runAction({
        inputs: { ...inputs, command: 'events', 'events-file': file },
        caCertPath: certificate.certPath,
        nodeArgs: ['--import', rssProbe],
        env: { RSS_FILE: rssFile },
        timeoutMs: 600_000
      })
      if (result.exitCode !== 0 || emulator.events.size === 0) {
        throw new Error(`the action failed to stream ${file}:\n${result.stdout}`)
      }
      return { ms: result.durationMs, rssKiB: Number(readFileSync(rssFile, 'utf8')) }
    }
    const streamTimes: number[] = []
    const senderTimes: number[] = []
    const bigRss: number[] = []
    const smallRss: number[] = []
    const sender = join(PROJECT_ROOT, 'scripts', 'bench-baseline-events.mjs')
    for (let run = 0; run < STREAM_RUNS; run++) {
      const big = await streamAction(bigFile)
      streamTimes.push(big.ms)
      bigRss.push(big.rssKiB)
      smallRss.push((await streamAction(smallFile)).rssKiB)
      emulator.reset()
      senderTimes.push(await timed([sender, bigFile], baseEnv, work))
    }
    const figures = {
      coldAction,
      coldBaseline,
      coldRatio: coldAction / coldBaseline,
      bundleBytes,
      streamAction: median(streamTimes),
      streamSender: median(senderTimes),
      rssBig: median(bigRss) / 1024,
      rssSmall: median(smallRss) / 1024
    }
    const table = [
      `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)} (Node ${process.versions.node}, ${process.platform}/${process.arch}, against the local emulator).`,
      '',
      '| Figure | Action | Baseline | Ratio | Target |',
      '| --- | --- | --- | --- | --- |',
      `| Cold start, one change (median of ${COLD_START_RUNS}, interleaved) | ${ms(figures.coldAction)} | ${ms(figures.coldBaseline)} (single HTTPS POST) | ${figures.coldRatio.toFixed(2)} | ≤ 1.30 |`,
      `| \`dist/\` JavaScript size | ${(bundleBytes / 1024).toFixed(0)} KiB | | | ≤ 1 MB |`,
      `| Stream ${STREAM_EVENTS.toLocaleString('en')} events of ${EVENT_BYTES} B from a file (median of ${STREAM_RUNS}) | ${ms(figures.streamAction)} | ${ms(figures.streamSender)} (sequential batch sender) | ${(figures.streamAction / figures.streamSender).toFixed(2)} | ≤ 1.00 |`,
      `| Peak RSS, ${STREAM_EVENTS.toLocaleString('en')} vs ${SMALL_STREAM_EVENTS.toLocaleString('en')} events | ${figures.rssBig.toFixed(0)} MiB | ${figures.rssSmall.toFixed(0)} MiB | ${(figures.rssBig / figures.rssSmall).toFixed(2)} | ≤ 1.50 |`
    ].join('\n')
    console.log(table)

    const readmePath = join(PROJECT_ROOT, 'README.md')
    const readme = readFileSync(readmePath, 'utf8')
    const marked = /(<!-- bench:start -->\n)[\s\S]*?(<!-- bench:end -->)/
    if (marked.test(readme)) {
      writeFileSync(readmePath, readme.replace(marked, `$1${table}\n$2`))
      console.log('\nREADME.md updated.')
    }
  } finally {
    await emulator.close()
    rmSync(work, { recursive: true, force: true })
  }
}

await main()

/**
 * npm run docs:images: the pictures in docs/images/, made from the bundle (run `npm run bundle`
 * first) against the emulator and the fake GitHub API: the job summary as GitHub renders it (GFM)
 * for a recorded deploy, a failed deploy with its triage and an outage, and the command line's
 * output in a terminal. Needs Debian's chromium (apt-get install chromium); not part of npm test.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import { Emulator } from '../emulator/emulator.ts'
import { FakeGitHub } from '../emulator/github.ts'
import { sampleRepository } from '../emulator/github-sample.ts'
import { testCertificate } from '../emulator/tls.ts'
import {
  DIST,
  gitlabJob,
  NODE_24 as NODE,
  PROJECT_ROOT,
  runBundledAction
} from './run-bundled-action.ts'

const IMAGES = join(PROJECT_ROOT, 'docs', 'images')
const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium'
const TOKEN = 'ghs_docs000000000000000000000000000000'
const WIDTH = 960

const GITHUB_STYLE = `body{font:14px/1.5 -apple-system,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;
color:#1f2328;margin:0;padding:24px 32px;background:#fff}h2{font-size:1.5em;border-bottom:1px solid #d1d9e0;
padding-bottom:.3em;margin:0 0 16px}h3{font-size:1.25em;margin:24px 0 12px}table{border-collapse:collapse;
margin:0 0 16px}th,td{border:1px solid #d1d9e0;padding:6px 13px;text-align:left}th{font-weight:600}
tr:nth-child(2n){background:#f6f8fa}a{color:#0969da;text-decoration:none}code{font-family:ui-monospace,
SFMono-Regular,Menlo,monospace;font-size:85%;background:#eff2f5;padding:.2em .4em;border-radius:6px}
.frame{border:1px solid #d1d9e0;border-radius:6px;padding:16px 24px}`
const TERMINAL_STYLE = `body{margin:0;padding:24px;background:#0d1117}pre{margin:0;color:#e6edf3;
font:13px/1.55 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap}
.prompt{color:#7ee787}.warn{color:#d29922}.err{color:#ff7b72}`

const escape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The page as headless Chromium shows it, `height` pixels tall, saved as docs/images/NAME. */
function picture(name: string, html: string, height: number): void {
  const dir = mkdtempSync(join(tmpdir(), 'cta-docs-'))
  const page = join(dir, 'page.html')
  writeFileSync(page, `<!doctype html><meta charset="utf-8">${html}`)
  execFileSync(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--hide-scrollbars',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${join(dir, 'profile')}`,
      `--window-size=${WIDTH},${height}`,
      `--screenshot=${join(IMAGES, name)}`,
      `file://${page}`
    ],
    { stdio: 'ignore' }
  )
  console.log(`docs/images/${name}`)
}

/** sh with these arguments, run while this process (the emulator's) goes on serving. */
function merged(
  args: string[],
  options: { env: NodeJS.ProcessEnv }
): Promise<{ stdout: string; status: number | null }> {
  return new Promise(resolve => {
    const child = spawn('sh', args, { ...options, stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text
    })
    child.on('close', status => resolve({ stdout, status }))
  })
}

/** A job summary's markdown as GitHub renders it, in its frame; tall enough for its rows. */
function summaryPicture(name: string, markdown: string): void {
  const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] })
  const rows = (html.match(/<tr>|<h[23]>|<p>/g) ?? []).length
  picture(name, `<style>${GITHUB_STYLE}</style><div class="frame">${html}</div>`, 120 + rows * 38)
}

const certificate = await testCertificate()
const sample = sampleRepository()
const emulator = await Emulator.start({ cert: certificate })
const github = await FakeGitHub.start({
  repository: sample.repository,
  token: TOKEN,
  cert: certificate
})
try {
  const run = (inputs: Record<string, string>, state?: Record<string, string>) =>
    runBundledAction({
      inputs: {
        'api-key': emulator.apiKey,
        'base-url': emulator.url,
        'github-token': TOKEN,
        ...inputs
      },
      eventName: 'push',
      payload: sample.pushPayload,
      env: {
        GITHUB_API_URL: github.url,
        GITHUB_REPOSITORY: sample.repository.fullName,
        GITHUB_SHA: sample.head,
        GITHUB_RUN_ID: sample.runId
      },
      caCertPath: certificate.certPath,
      state
    })

  summaryPicture('summary-change-recorded.png', (await run({ environment: 'production' })).summary)

  const main = await run({ environment: 'production', 'record-at': 'job-end' })
  const failed = await run(
    { environment: 'production', 'record-at': 'job-end', 'job-status': 'failure' },
    main.state
  )
  summaryPicture('summary-failed-deploy-with-triage.png', failed.summary)

  emulator.inject('POST /v2/change', { status: 503, body: 'upstream connect error' }, Infinity)
  const outage = await run({ environment: 'production', 'max-attempts': '1' })
  summaryPicture('summary-service-outage.png', outage.summary)
  emulator.reset()

  // The command line in a GitLab CI job, wrapping a deploy that fails: its two streams as one.
  const deploy = `echo "Deploying…"; exit 1`
  const cli = await merged(
    ['-c', '"$0" "$@" 2>&1', NODE, join(DIST, 'cli.cjs'), 'run', '--', 'sh', '-c', deploy],
    {
      env: {
        PATH: process.env['PATH'],
        NODE_EXTRA_CA_CERTS: certificate.certPath,
        CHANGE_TRACKING_API_KEY: emulator.apiKey,
        CHANGE_TRACKING_BASE_URL: emulator.url,
        ...gitlabJob(sample.head)
      }
    }
  )
  const lines = [
    `<span class="prompt">$</span> change-tracking run -- sh -c '${escape(deploy)}'`,
    ...cli.stdout
      .trimEnd()
      .split('\n')
      .map(line => escape(line.replaceAll(emulator.url, 'https://api.example.com/')))
      .map(line => {
        if (line.startsWith('warning:')) return `<span class="warn">${line}</span>`
        return line.startsWith('error:') ? `<span class="err">${line}</span>` : line
      }),
    `<span class="prompt">$</span> echo $?`,
    String(cli.status)
  ]
  picture(
    'command-line-failed-deploy.png',
    `<style>${TERMINAL_STYLE}</style><pre>${lines.join('\n')}</pre>`,
    60 + lines.length * 21
  )
} finally {
  await Promise.all([emulator.close(), github.close()])
}

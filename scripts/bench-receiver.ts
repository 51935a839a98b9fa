/**
 * The receiver (`change-tracking serve`) as the bench drives it: started from the bundled command
 * line as a process of its own, fed distinct Argo CD deploys over loopback HTTP with a fixed number
 * in flight, and read from the outside: its /metrics and its memory in /proc.
 */
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { Agent, request, type IncomingMessage } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { PROJECT_ROOT, spawnNode, type NodeRun } from './run-bundled-action.ts'

/** Argo CD's notification of a sync that succeeded with healthy resources, as recorded. */
const HEALTHY_SYNC = join(PROJECT_ROOT, '__tests__/fixtures/gitops/argocd-sync-healthy.json')
/** What the receiver logs once it listens (text log lines); `--port 0` makes it say its port. */
const LISTENING = /Listening on \S+ port (\d+)/
/** A receiver that does not say it listens within this long failed to start. */
const START_TIMEOUT_MS = 10_000
const METRICS_POLL_MS = 100

export interface Receiver {
  /** http://127.0.0.1:PORT */
  url: string
  pid: number
  /** Sends SIGTERM; resolves with the run once the process has exited. */
  stop: () => Promise<NodeRun>
}

/** `node CLI serve` on a free loopback port: resolves once it says it listens. */
export async function startReceiver(
  cli: string,
  env: Record<string, string | undefined>,
  stateDir: string,
  timeoutMs: number
): Promise<Receiver> {
  const args = [cli, 'serve', '--port', '0', '--host', '127.0.0.1', '--state-dir', stateDir]
  const spawned: { child?: ChildProcess } = {}
  const exited = spawnNode(args, env, stateDir, timeoutMs, child => {
    spawned.child = child
  })
  const child = spawned.child as ChildProcess & { pid: number; stdout: Readable }
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`change-tracking serve did not listen within ${START_TIMEOUT_MS} ms`))
    }, START_TIMEOUT_MS)
    let said = ''
    const read = (chunk: string): void => {
      said += chunk
      const found = LISTENING.exec(said)?.[1]
      if (found === undefined) return
      clearTimeout(timer)
      child.stdout.off('data', read)
      resolve(found)
    }
    child.stdout.on('data', read)
    exited.then(run => {
      clearTimeout(timer)
      reject(
        new Error(`change-tracking serve exited with ${run.exitCode}:\n${run.stdout}${run.stderr}`)
      )
    }, reject)
  })
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () => {
      child.kill('SIGTERM')
      return exited
    }
  }
}

/**
 * COUNT distinct deploys, as the bodies Argo CD would post, with the service each records: the
 * recorded final notification of a sync that succeeded with healthy resources, each of its own
 * Application (bench-00001, …), so that none repeats another or re-syncs a revision already
 * recorded. Each started a minute ago: the receiver keeps a deploy's key for a week, and takes
 * nothing older as new.
 */
export function argoCdDeploys(
  count: number,
  now = Date.now()
): Array<{ service: string; body: string }> {
  const recorded = readFileSync(HEALTHY_SYNC, 'utf8')
  const startedAt = new Date(now - 60_000).toISOString()
  const finishedAt = new Date(now - 24_000).toISOString()
  return Array.from({ length: count }, (_, i) => {
    const body = JSON.parse(recorded)
    const service = `bench-${String(i + 1).padStart(5, '0')}`
    body.app.metadata.name = service
    body.app.metadata.annotations['change-tracking/service'] = service
    Object.assign(body.app.status.operationState, { startedAt, finishedAt })
    // This sync's own history entry is the one that started with it.
    Object.assign(body.app.status.history.at(-1), {
      deployStartedAt: startedAt,
      deployedAt: finishedAt
    })
    return { service, body: JSON.stringify(body) }
  })
}

/** Each body posted to the receiver's POST /argocd, IN_FLIGHT at a time; resolves with each status. */
export async function postToArgoCd(
  receiver: Receiver,
  secret: string,
  bodies: string[],
  inFlight: number
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight })
  const url = new URL('/argocd', receiver.url)
  const headers = { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' }
  const statuses: number[] = []
  // One iterator shared by the workers: each takes the next body when its last is answered.
  const queue = bodies.entries()
  const worker = async (): Promise<void> => {
    for (const [index, body] of queue) {
      const posted = request(url, { method: 'POST', agent, headers })
      posted.end(body)
      const [response] = (await once(posted, 'response')) as [IncomingMessage]
      response.resume()
      await once(response, 'end')
      statuses[index] = response.statusCode ?? 0
    }
  }
  try {
    await Promise.all(Array.from({ length: inFlight }, worker))
  } finally {
    agent.destroy()
  }
  return statuses
}

/** A sample of the receiver's /metrics without labels: change_tracking_NAME. */
export async function metric(receiver: Receiver, name: string): Promise<number> {
  const response = await fetch(new URL('/metrics', receiver.url))
  const text = await response.text()
  const sample = new RegExp(`^change_tracking_${name} (\\S+)$`, 'm').exec(text)
  if (!response.ok || sample === null) {
    throw new Error(`GET /metrics answered ${response.status} without change_tracking_${name}`)
  }
  return Number(sample[1])
}

/** Polls a metric every METRICS_POLL_MS until it reads `want`; throws with what it read after `timeoutMs`. */
export async function metricReaches(
  receiver: Receiver,
  name: string,
  want: number,
  timeoutMs: number
): Promise<void> {
  const deadline = performance.now() + timeoutMs
  let read = await metric(receiver, name)
  while (read !== want && performance.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, METRICS_POLL_MS))
    read = await metric(receiver, name)
  }
  if (read !== want) throw new Error(`${name} read ${read}, not ${want}, after ${timeoutMs} ms`)
}

/** The process's resident memory now and at its peak (VmRSS, VmHWM), in bytes: Linux's /proc. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string): number => {
    const found = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)
    if (found === null) throw new Error(`/proc/${pid}/status has no ${field}`)
    return Number(found[1]) * 1024
  }
  return { rss: kib('VmRSS'), peak: kib('VmHWM') }
}

/** An https:// address on a loopback port nothing listens on: a service that cannot be reached. */
export async function unreachableService(): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise(resolve => server.close(resolve))
  return `https://127.0.0.1:${port}/`
}

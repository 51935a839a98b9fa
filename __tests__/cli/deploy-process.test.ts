import { describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FORWARDED_SIGNALS, runDeploy, type DeployEnd } from '../../src/cli/deploy-process.ts'

const PROJECT_ROOT = join(import.meta.dirname, '../..')
const WRAPPER = join(import.meta.dirname, 'fixtures/wrap-deploy.ts')
/** How long a deploy that waits for a signal lives without one: no process outlives a failed test. */
const KEEP_ALIVE_MS = 20_000

/** A deploy that is a Node script, run by the Node that runs the tests. */
const deployScript = (script: string, ...args: string[]): Promise<DeployEnd> =>
  runDeploy(process.execPath, ['-e', script, ...args])

function scratchFile(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'cta-deploy-')), name)
  writeFileSync(path, text)
  return path
}

describe('a deploy that runs', () => {
  it('succeeds on exit 0, timed from before its start to its end', async () => {
    const ticks = [1_000, 5_000]
    const end = await runDeploy(process.execPath, ['-e', ''], { clock: () => ticks.shift()! })
    expect(end).toEqual({
      started: true,
      outcome: 'success',
      exitCode: 0,
      startedAt: 1_000,
      finishedAt: 5_000
    })
  })

  it('fails with its own exit status', async () => {
    expect(await deployScript('process.exit(3)')).toMatchObject({
      outcome: 'failure',
      exitCode: 3
    })
  })

  it.each([
    ['TERM', 143],
    ['INT', 130],
    ['HUP', 129],
    ['KILL', 137]
  ])(
    'fails when a SIG%s this process never got ends it, with exit status %d',
    async (name, exitCode) => {
      expect(await runDeploy('sh', ['-c', `kill -${name} $$`])).toMatchObject({
        outcome: 'failure',
        exitCode,
        signal: `SIG${name}`
      })
    }
  )

  it.each<[NodeJS.Signals, number]>([
    ['SIGTERM', 143],
    ['SIGTERM', 0],
    ['SIGHUP', 3]
  ])('is cancelled by a %s passed on to it, though it exits %d', async (signal, status) => {
    // The deploy handles the signal and exits as it chooses; it says "ready" once it can.
    const deploy = `process.on('${signal}', () => process.exit(${status}))
process.stdout.write('ready\\n')
setTimeout(() => {}, ${KEEP_ALIVE_MS})`
    // Emitted, not sent: under Jest, this `process` is a stand-in that never sees real signals.
    let sent = false
    const end = await runDeploy(process.execPath, ['-e', deploy], {
      stdout: () => {
        if (sent) return
        sent = true
        process.emit(signal, signal)
      }
    })
    expect(end).toMatchObject({ outcome: 'cancelled', exitCode: status })
    expect(end).not.toHaveProperty('signal')
  })

  it('gets its arguments as given, with no shell between', async () => {
    const check = `process.exit(process.argv[1] === '$HOME; exit 4' ? 0 : 5)`
    expect(await deployScript(check, '$HOME; exit 4')).toMatchObject({ exitCode: 0 })
  })

  it('runs in the environment it is given', async () => {
    const end = await runDeploy(
      process.execPath,
      ['-e', `process.exit(process.env.DEPLOY_TARGET === 'production' ? 0 : 6)`],
      { env: { ...process.env, DEPLOY_TARGET: 'production' } }
    )
    expect(end).toMatchObject({ exitCode: 0 })
  })

  it('takes over the forwarded signals only while the deploy runs', async () => {
    const listeners = () => FORWARDED_SIGNALS.map(signal => process.listenerCount(signal))
    const before = listeners()
    const running = deployScript('')
    expect(listeners()).toEqual(before.map(count => count + 1))
    await running
    expect(listeners()).toEqual(before)
    await runDeploy('change-tracking-no-such-deploy', [])
    expect(listeners()).toEqual(before)
  })

  it.each([
    [false, 7],
    [true, 0]
  ])(
    'from a terminal (%s), passes a SIGINT on only when no terminal already did, cancelled either way',
    async (interactive, exitCode) => {
      // The deploy exits 7 on a SIGINT, 0 on its own; the wrapper gets a SIGINT as it starts.
      const deploy = `process.on('SIGINT', () => process.exit(7)); setTimeout(() => process.exit(0), 300)`
      const running = runDeploy(process.execPath, ['-e', deploy], { interactive })
      await new Promise(resolve => setTimeout(resolve, 50))
      process.emit('SIGINT', 'SIGINT')
      const end = await running
      // Passed on before the deploy set its handler, the SIGINT ends it instead: not 0 either.
      expect(end.exitCode === 0).toBe(exitCode === 0)
      expect(end).toHaveProperty('outcome', 'cancelled')
    }
  )
})

describe('a deploy whose output is taken', () => {
  /** Runs `script` in sh with its output taken: the chunks, as one string, and how it ended. */
  async function taken(script: string): Promise<{ output: string; end: DeployEnd }> {
    let output = ''
    const end = await runDeploy('sh', ['-c', script], {
      stdout: chunk => {
        output += chunk
      }
    })
    return { output, end }
  }

  it.each([
    ['printf x', 'x', false],
    ['printf "x\\ny\\n"', 'x\ny\n', true],
    ['true', '', true]
  ])(
    'passes on every chunk of `%s`, and says whether it ended a line',
    async (script, output, ends) => {
      expect(await taken(script)).toEqual({
        output,
        end: expect.objectContaining({ outcome: 'success', outputEndsLine: ends })
      })
    }
  )

  it('settles only once the output has ended, though the deploy exited first', async () => {
    // A process the deploy left behind holds its output for a while after the deploy exits.
    const run = await taken('(sleep 0.3; printf late) & printf early; exit 4')
    expect(run).toEqual({
      output: 'earlylate',
      end: expect.objectContaining({ outcome: 'failure', exitCode: 4, outputEndsLine: false })
    })
  })
})

describe('a deploy that cannot start', () => {
  it('is not found: 127, naming the command as given', async () => {
    expect(await runDeploy('change-tracking-no-such-deploy', ['--now'])).toEqual({
      started: false,
      exitCode: 127,
      message:
        'The deploy command "change-tracking-no-such-deploy" was not found: give its path, or add its folder to PATH.'
    })
  })

  it('is a script whose #! interpreter is missing: 127, saying so', async () => {
    const script = scratchFile('deploy.sh', '#!/change-tracking/no-such-shell\n')
    chmodSync(script, 0o755)
    const end = await runDeploy(script, [])
    expect(end).toMatchObject({ started: false, exitCode: 127 })
    expect(end).toHaveProperty('message', expect.stringContaining('interpreter on its #! line'))
  })

  it('is not executable: 126', async () => {
    const script = scratchFile('deploy.sh', '#!/bin/sh\nexit 0\n')
    chmodSync(script, 0o644)
    const end = await runDeploy(script, [])
    expect(end).toMatchObject({ started: false, exitCode: 126 })
    expect(end).toHaveProperty('message', expect.stringContaining('is not executable'))
  })

  it('is a path through a file (a failure Node throws): 126, with the reason', async () => {
    const file = scratchFile('deploy.sh', '')
    const end = await runDeploy(`${file}/deploy`, [])
    expect(end).toEqual({
      started: false,
      exitCode: 126,
      message: `The deploy command ${JSON.stringify(`${file}/deploy`)} could not be started (ENOTDIR).`
    })
  })

  it('names the command on one line', async () => {
    const end = await runDeploy('deploy\nnow', [])
    expect(end).toHaveProperty('message', expect.stringContaining('"deploy\\nnow"'))
  })
})

interface WrapperRun {
  stdout: string
  stderr: string
  /** The wrapper's result: the last line of its standard error. */
  end: DeployEnd
  exitCode: number | null
  signal: NodeJS.Signals | null
}

/**
 * Runs a Node script as the deploy under a wrapper process, as the command line does, with
 * `input` on its standard input; `onStdout` sees the output so far and may signal the wrapper,
 * alone or (`detached`: the wrapper leads a process group) with its group, as a terminal does.
 */
function wrap(
  deploy: string,
  options: { input?: string; detached?: boolean; onStdout?: (output: string, pid: number) => void }
): Promise<WrapperRun> {
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  const args = [WRAPPER, process.execPath, '-e', deploy]
  const wrapper = spawn(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env,
    detached: options.detached
  })
  wrapper.stdin.end(options.input ?? '')
  let stdout = ''
  let stderr = ''
  wrapper.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    options.onStdout?.(stdout, wrapper.pid!)
  })
  wrapper.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  return new Promise((resolve, reject) => {
    wrapper.on('error', reject)
    wrapper.on('close', (exitCode, signal) => {
      try {
        const end = JSON.parse(stderr.trim().split('\n').at(-1)!) as DeployEnd
        resolve({ stdout, stderr, end, exitCode, signal })
      } catch {
        reject(new Error(`The wrapper (exit ${exitCode}, ${signal}) gave no result: ${stderr}`))
      }
    })
  })
}

/** Sends `signal` once, as soon as the deploy has printed "ready". */
function whenReady(send: (pid: number) => void): (output: string, pid: number) => void {
  let sent = false
  return (output, pid) => {
    if (sent || !output.includes('ready\n')) return
    sent = true
    send(pid)
  }
}

describe('a deploy under a wrapper process', () => {
  it('shares its standard input, output and error', async () => {
    const echo = `let input = ''
process.stdin.on('data', chunk => {
input += chunk
}).on('end', () => {
  process.stdout.write('out:' + input)
  process.stderr.write('err:' + input)
})`
    const run = await wrap(echo, { input: 'hello\n' })
    expect(run.stdout).toBe('out:hello\n')
    expect(run.stderr).toMatch(/^err:hello\n/)
    expect(run.end).toMatchObject({ outcome: 'success', exitCode: 0 })
  })

  it('gets the SIGTERM sent to the wrapper, which waits for it and exits 143', async () => {
    const deploy = `process.once('SIGTERM', () => {
  process.stdout.write('deploy got SIGTERM\\n', () => process.kill(process.pid, 'SIGTERM'))
})
process.stdout.write('ready\\n')
setTimeout(() => {}, ${KEEP_ALIVE_MS})`
    const run = await wrap(deploy, { onStdout: whenReady(pid => process.kill(pid, 'SIGTERM')) })
    expect(run.stdout).toBe('ready\ndeploy got SIGTERM\n')
    expect(run.end).toMatchObject({ outcome: 'cancelled', exitCode: 143, signal: 'SIGTERM' })
    expect(run).toMatchObject({ exitCode: 143, signal: null })
  })

  it('is cancelled by a Ctrl-C that reaches both, and exits with the deploy’s own status', async () => {
    // The deploy stops cleanly on its interrupts (it gets two: the group's and the wrapper's):
    // cancelled all the same, with the status it chose.
    const deploy = `process.on('SIGINT', () => process.exit(0))
process.stdout.write('ready\\n')
setTimeout(() => {}, ${KEEP_ALIVE_MS})`
    const toGroup = (pid: number) => process.kill(-pid, 'SIGINT')
    const run = await wrap(deploy, { detached: true, onStdout: whenReady(toGroup) })
    expect(run.end).toMatchObject({ outcome: 'cancelled', exitCode: 0 })
    expect(run).toMatchObject({ exitCode: 0, signal: null })
  })
})

/** One emulator for a test file's in-process runs: started once, reset before each test, no proxy. */
import { afterAll, beforeAll, beforeEach } from '@jest/globals'
import { Emulator } from '../../emulator/emulator.ts'
import { trustTestCertificate } from '../../emulator/tls.ts'

export function useEmulator(started: (emulator: Emulator) => void): void {
  let emulator: Emulator
  beforeAll(async () => {
    for (const name of ['HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'])
      delete process.env[name]
    await trustTestCertificate()
    emulator = await Emulator.start()
    started(emulator)
  })
  afterAll(async () => {
    await emulator.close()
  })
  beforeEach(() => emulator.reset())
}

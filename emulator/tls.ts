/**
 * A certificate made when the tests run, for the loopback HTTPS servers of the test suite.
 * It is valid for localhost, 127.0.0.1 and TEST_SERVICE_HOST (a non-loopback name that only the
 * test proxy knows how to reach).
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tls from 'node:tls'
import { generate } from 'selfsigned'

/** A hostname that does not resolve: only the test CONNECT proxy routes it to the emulator. */
export const TEST_SERVICE_HOST = 'change-tracking.test'

export interface TestCertificate {
  key: string
  cert: string
  /** The certificate as a file, for NODE_EXTRA_CA_CERTS. */
  certPath: string
}

let pending: Promise<TestCertificate> | undefined

/** The suite's certificate; made once per process. */
export function testCertificate(): Promise<TestCertificate> {
  pending ??= (async () => {
    // A unique subject: when one process trusts several of these (jest reuses workers across test
    // files), certificate verification must not pick another file's certificate as the issuer.
    const subject = [{ name: 'commonName', value: `change-tracking-action test ${randomUUID()}` }]
    const pems = await generate(subject, {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 2, value: TEST_SERVICE_HOST },
            { type: 7, ip: '127.0.0.1' }
          ]
        }
      ]
    })
    const dir = mkdtempSync(join(tmpdir(), 'cta-cert-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    const certPath = join(dir, 'cert.pem')
    writeFileSync(certPath, pems.cert)
    return { key: pems.private, cert: pems.cert, certPath }
  })()
  return pending
}

/** Makes this process trust the test certificate, as NODE_EXTRA_CA_CERTS does for a child. */
export async function trustTestCertificate(): Promise<TestCertificate> {
  const certificate = await testCertificate()
  const defaults = tls.getCACertificates('default')
  if (!defaults.includes(certificate.cert)) {
    tls.setDefaultCACertificates([...defaults, certificate.cert])
  }
  return certificate
}

/**
 * A certificate made when the tests run, for the loopback HTTPS servers of the test suite.
 * It is valid for localhost, 127.0.0.1 and TEST_SERVICE_HOST (a non-loopback name that only the
 * test proxy knows how to reach).
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as tls from 'node:tls'

/** A hostname that does not resolve: only the test CONNECT proxy routes it to the emulator. */
export const TEST_SERVICE_HOST = 'change-tracking.test'

export interface TestCertificate {
  key: string
  cert: string
  /** The certificate as a file, for NODE_EXTRA_CA_CERTS. */
  certPath: string
}

/** Set by the test suite's global setup: a folder holding one certificate for every test file. */
export const TEST_CERTIFICATE_VARIABLE = 'CTA_TEST_CERTIFICATE_DIR'

let pending: Promise<TestCertificate> | undefined

/** The suite's certificate: the global setup's when there is one, else made once per process. */
export function testCertificate(): Promise<TestCertificate> {
  const shared = process.env[TEST_CERTIFICATE_VARIABLE]
  if (shared) {
    const certPath = join(shared, 'cert.pem')
    const read = (name: string) => readFileSync(join(shared, name), 'utf8')
    return Promise.resolve({ key: read('key.pem'), cert: read('cert.pem'), certPath })
  }
  pending ??= (async () => {
    // A unique subject: when one process trusts several of these (jest reuses workers across test
    // files), certificate verification must not pick another file's certificate as the issuer.
    const subject = [{ name: 'commonName', value: `change-tracking-action test ${randomUUID()}` }]
    // Loaded only to make one: the suite reads its global setup's, and the library is large.
    const { generate } = await import('selfsigned')
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
    return writeCertificate(dir, pems.private, pems.cert)
  })()
  return pending
}

/** Writes a certificate into `dir`, as the shared one is read. */
export function writeCertificate(dir: string, key: string, cert: string): TestCertificate {
  writeFileSync(join(dir, 'key.pem'), key)
  writeFileSync(join(dir, 'cert.pem'), cert)
  return { key, cert, certPath: join(dir, 'cert.pem') }
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

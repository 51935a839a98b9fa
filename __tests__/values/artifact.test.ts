import { describe, expect, it } from '@jest/globals'
import { Inputs } from '../../src/settings.ts'
import { MAX_ARTIFACT_CHARS, parseArtifact } from '../../src/values/artifact.ts'
import { inputError } from '../support/input-error.ts'
import { restartsFar, scansOf } from '../support/scans.ts'

const HEX = '244fd47e07d1004f0aed9c156aa09083c4ac1beb9a1c8bd4e06a7e7e1cf2e4e6'
const DIGEST = `sha256:${HEX}`

describe('parseArtifact: an image, as the purl specification writes the OCI type', () => {
  it.each([
    // The specification's own examples, with a full digest.
    [
      `docker.io/library/debian:latest@${DIGEST}`,
      `pkg:oci/debian@sha256%3A${HEX}?repository_url=docker.io/library/debian&tag=latest`
    ],
    [
      `ghcr.io/debian:bullseye@${DIGEST}`,
      `pkg:oci/debian@sha256%3A${HEX}?repository_url=ghcr.io/debian&tag=bullseye`
    ],
    [
      `gcr.io/distroless/static:latest@${DIGEST}`,
      `pkg:oci/static@sha256%3A${HEX}?repository_url=gcr.io/distroless/static&tag=latest`
    ],
    // Without a tag: no tag qualifier.
    [
      `ghcr.io/acme/shop@${DIGEST}`,
      `pkg:oci/shop@sha256%3A${HEX}?repository_url=ghcr.io/acme/shop`
    ],
    // Docker's defaults: docker.io, and library/ for a one-part name; a registry with a port.
    [
      `nginx:1.27@${DIGEST}`,
      `pkg:oci/nginx@sha256%3A${HEX}?repository_url=docker.io/library/nginx&tag=1.27`
    ],
    [
      `localhost:5000/team/app:2@${DIGEST}`,
      `pkg:oci/app@sha256%3A${HEX}?repository_url=localhost:5000/team/app&tag=2`
    ]
  ])('%s is %s', (raw, purl) => {
    expect(parseArtifact(raw)?.purl).toBe(purl)
    expect(parseArtifact(raw)?.digest).toBe(DIGEST)
  })

  it('keeps an image without a digest as its reference, normalized, with no purl', () => {
    expect(parseArtifact('nginx:1.27')).toEqual({
      reference: 'docker.io/library/nginx:1.27',
      image: { name: 'docker.io/library/nginx', tag: '1.27' }
    })
    expect(parseArtifact('localhost:5000/team/app:2')?.image?.name).toBe('localhost:5000/team/app')
    expect(parseArtifact('acme/shop')).toEqual({
      reference: 'docker.io/acme/shop',
      image: { name: 'docker.io/acme/shop', tag: undefined }
    })
  })

  it('takes a purl as given, and nothing when empty', () => {
    expect(parseArtifact(' pkg:npm/%40acme/shop@1.4.2 ')).toEqual({
      purl: 'pkg:npm/%40acme/shop@1.4.2'
    })
    expect(parseArtifact('  ')).toBeUndefined()
  })

  it.each([
    ['a digest that is not sha256', `nginx@sha512:${HEX}`],
    ['a short digest', 'nginx@sha256:abc'],
    ['an upper-case digest', `nginx@sha256:${HEX.toUpperCase()}`],
    ['two digests', `nginx@${DIGEST}@${DIGEST}`],
    ['an upper-case path', 'ghcr.io/Acme/shop:1'],
    ['a tag with an invalid character', 'nginx:1.27!'],
    ['a space', 'nginx 1.27'],
    ['a purl with a space', 'pkg:npm/shop @1'],
    ['a purl with control characters', 'pkg:npm/a\u0001\u001bb@1'],
    ['a purl with text that is not percent-encoded', 'pkg:npm/caf\u00e9@1'],
    ['a purl with a stray percent sign', 'pkg:npm/a%zz@1'],
    ['a purl without a name', 'pkg:npm/'],
    ['no name at all', `@${DIGEST}`],
    ['too long', `ghcr.io/${'a'.repeat(MAX_ARTIFACT_CHARS)}`]
  ])('refuses %s, naming artifact', (_, raw) => {
    const error = inputError(() => parseArtifact(raw))
    expect(error.input).toBe(Inputs.Artifact)
    expect(error.message).toMatch(/^Input "artifact" must /)
  })

  it.each([
    'user:s3cretpass@ghcr.io/acme/shop:1',
    'glpat-TOKEN123@registry.example.com/acme/shop:1',
    'https://user:s3cretpass@ghcr.io/acme/shop:1'
  ])('refuses credentials before the registry without repeating them: %s', raw => {
    const error = inputError(() => parseArtifact(raw))
    expect(error.input).toBe(Inputs.Artifact)
    expect(error.message).toMatch(/^Input "artifact" must not hold credentials/)
    expect(error.message).not.toMatch(/s3cret|TOKEN123|ghcr|registry\.example/)
  })
})

describe('parseArtifact: what it reads of a hostile value', () => {
  /** Values made to make a pattern backtrack: separators, "@"s, colons, escapes, a bad ending. */
  const HOSTILE = ['a-', 'a.', 'a__', 'a@', 'a:', 'a/', '%a', 'pkg:a/%', 'a:a@']
  /** `unit` repeated to `length` characters, the last one "!", which no grammar allows. */
  const ofLength = (unit: string, length: number): string =>
    `${unit.repeat(Math.ceil(length / unit.length)).slice(0, length - 1)}!`
  const refusal = (raw: string) => inputError(() => parseArtifact(raw)).message

  it.each(HOSTILE)(
    `reads no pattern past ${MAX_ARTIFACT_CHARS} characters: a longer %j… is refused for its length`,
    unit => {
      const messages: string[] = []
      const scans = scansOf(() => messages.push(refusal(ofLength(unit, 100_000))))
      expect(messages).toEqual([expect.stringMatching(/^Input "artifact" must be at most 1,000 /)])
      for (const { longest } of scans) expect(longest).toBeLessThanOrEqual(MAX_ARTIFACT_CHARS)
    }
  )

  it.each(HOSTILE)('refuses %j… as long as it reads, with no pattern that restarts far', unit => {
    const messages: string[] = []
    const scans = scansOf(() => messages.push(refusal(ofLength(unit, MAX_ARTIFACT_CHARS))))
    expect(messages).toEqual([expect.stringMatching(/^Input "artifact" must /)])
    expect(scans.length).toBeGreaterThan(0)
    const restarting = scans.filter(scan => restartsFar(scan.pattern))
    expect(restarting.map(scan => String(scan.pattern))).toEqual([])
  })
})

import { describe, expect, it } from '@jest/globals'
import { OperationState } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/OperationState'
import { RevisionHistory } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/RevisionHistory'
import { ApplicationSource } from '@kubernetes-models/argo-cd/argoproj.io/v1alpha1/ApplicationSource'
import { HelmRelease } from '@kubernetes-models/flux-cd/helm.toolkit.fluxcd.io/v2/HelmRelease'
import { Kustomization } from '@kubernetes-models/flux-cd/kustomize.toolkit.fluxcd.io/v1/Kustomization'
import fc from 'fast-check'
import { readdirSync, readFileSync } from 'node:fs'
import {
  MAX_NOTIFICATION_MESSAGE_CHARS,
  MAX_NAME_CHARS,
  readNotification,
  type Controller,
  type Notification
} from '../../src/serve/notifications.ts'
import { Inputs } from '../../src/settings.ts'
import { UNSEEN_CHARACTERS } from '../../src/helpers/text.ts'
import { parseText } from '../../src/values/parsers.ts'
import { hostileText } from '../support/hostile-text.ts'

const FIXTURES = new URL('../fixtures/gitops/', import.meta.url)
const FIXTURE_NAMES = readdirSync(FIXTURES).map(file => file.replace(/\.json$/, ''))

type Json = Record<string, unknown>

/** A recorded body, parsed afresh: each test may change its copy. */
function fixture(name: string): Json {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Json
}

/** The value at a path of keys (array indexes as strings). */
function valueAt(body: unknown, path: string[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Json)[key], body)
}

/** The body with the value at a path replaced; undefined removes it. */
function withValueAt(body: Json, path: string[], value: unknown): Json {
  const parent = valueAt(body, path.slice(0, -1)) as Json
  if (value === undefined) delete parent[path.at(-1)!]
  else parent[path.at(-1)!] = value
  return body
}

/** A recorded body with the values at these dotted paths replaced (undefined: removed). */
function edited(name: string, changes: Record<string, unknown>): Json {
  const body = fixture(name)
  for (const [path, value] of Object.entries(changes)) withValueAt(body, path.split('.'), value)
  return body
}

const controllerOf = (name: string): Controller => (name.startsWith('argocd') ? 'argocd' : 'flux')

/** The notification a body gives, failing the test when it gives none. */
function read(controller: Controller, body: unknown): Notification {
  const result = readNotification(controller, body)
  if (!('notification' in result)) throw new Error(`no notification: ${JSON.stringify(result)}`)
  return result.notification
}

const readFixture = (name: string) => read(controllerOf(name), fixture(name))

const C0 = '8fc11d68f9d0aee371df28597bd24ddca03f10cd'
const C1 = '5b8c6fb6f598dd77740de8792ca22640e4430078'
const C2 = 'f1eb0a49d4b51073a1d34d13d0a71450527ace27'
const C3 = 'c98ff11e5749abffbafa27dee3f088f539513070'
const C4 = '1e6be670afb640aedfb2573c857d46b1c84db26f'
const IMAGE =
  'ghcr.io/acme/shop-web:1.42.0@sha256:69e6c73dfbe0ec61b69b9d1811addcc56136f0247fecae5725cf33610bb8e3d1'
const SHOP_STARTED = Date.parse('2025-03-10T09:14:05Z')

describe('the recorded shapes are those of the real objects', () => {
  it.each(FIXTURE_NAMES.filter(name => name.startsWith('argocd')))(
    "%s: operation state, history and sources validate against Argo CD's Application model",
    name => {
      // The template's toJson writes a field the Application lacks as null.
      const app = JSON.parse(JSON.stringify(fixture(name).app), (_, value) =>
        value === null ? undefined : value
      )
      const { operationState, history } = app.status
      expect(() => new OperationState(operationState).validate()).not.toThrow()
      for (const entry of history) expect(() => new RevisionHistory(entry).validate()).not.toThrow()
      for (const source of app.spec.sources ?? [app.spec.source]) {
        expect(() => new ApplicationSource(source).validate()).not.toThrow()
      }
    }
  )

  it.each(FIXTURE_NAMES.filter(name => name.startsWith('flux')))(
    '%s: the involved object is a Kustomization or a HelmRelease of the current API',
    name => {
      const { apiVersion, kind } = fixture(name).involvedObject as Json
      expect(
        [Kustomization, HelmRelease].map(model => [model.apiVersion, model.kind])
      ).toContainEqual([apiVersion, kind])
    }
  )
})

describe('readNotification: Argo CD', () => {
  it('a sync that succeeded with healthy resources: every field of the change', () => {
    expect(readFixture('argocd-sync-healthy')).toEqual({
      controller: 'argocd',
      deployKey: 'argocd/shop@2025-03-10T09:14:05.000Z',
      object: 'argocd/shop',
      stage: 'final',
      service: 'shop',
      environment: 'production',
      version: C2,
      user: 'alice@acme.example',
      startedAt: SHOP_STARTED,
      finishedAt: Date.parse('2025-03-10T09:14:41Z'),
      outcome: 'success',
      status: 'Succeeded, Healthy',
      message: 'successfully synced (all tasks run)',
      previousVersion: C1,
      rollback: false,
      artifact: IMAGE,
      repository: 'https://github.com/acme/shop-deploy.git',
      link: {
        text: 'shop in Argo CD',
        url: 'https://argocd.acme.example/applications/argocd/shop'
      },
      metadata: {
        project: 'storefront',
        phase: 'Succeeded',
        health: 'Healthy',
        automated: false,
        cluster: 'https://kubernetes.default.svc'
      }
    })
  })

  it('a Running sync: no end yet, the branch it was asked to sync, the same deploy key', () => {
    const running = readFixture('argocd-sync-running')
    expect(running).toMatchObject({
      deployKey: 'argocd/shop@2025-03-10T09:14:05.000Z',
      stage: 'running',
      outcome: 'unknown',
      status: 'Running, Healthy',
      version: 'main',
      previousVersion: C1,
      rollback: false
    })
    expect(running.finishedAt).toBeUndefined()
    // No image of the Application carries a digest.
    expect(running.artifact).toBeUndefined()
  })

  it('a sync that succeeded while health is still Progressing is not over', () => {
    expect(readFixture('argocd-sync-progressing')).toMatchObject({
      stage: 'progressing',
      outcome: 'unknown',
      status: 'Succeeded, Progressing',
      version: C2,
      previousVersion: C1,
      // The first image with a digest, not the first image.
      artifact: IMAGE
    })
  })

  it('a failed sync: failure, and the previous deploy is the last history entry', () => {
    const failed = readFixture('argocd-sync-failed')
    expect(failed).toMatchObject({
      stage: 'final',
      outcome: 'failure',
      status: 'Failed, Healthy',
      version: C3,
      user: 'bob',
      previousVersion: C2,
      rollback: false
    })
    expect(failed.message).toMatch(/^one or more objects failed to apply, reason: Deployment/)
  })

  it('a sync that ends in Error is a failure too', () => {
    const body = edited('argocd-sync-failed', { 'app.status.operationState.phase': 'Error' })
    expect(read('argocd', body)).toMatchObject({ outcome: 'failure', status: 'Error, Healthy' })
  })

  it('an automated sync that degraded: failure, by argocd, after the last deploy that succeeded', () => {
    expect(readFixture('argocd-sync-degraded')).toMatchObject({
      stage: 'final',
      outcome: 'failure',
      status: 'Succeeded, Degraded',
      version: C4,
      user: 'argocd',
      // The failed sync of C3 left no history entry.
      previousVersion: C2,
      metadata: { automated: true }
    })
  })

  it.each([
    ['argocd-sync-terminating', 'Terminating, Progressing'],
    ['argocd-sync-terminated', 'Failed, Progressing']
  ])('%s: cancelled, though Argo CD marks a terminated operation failed', (name, status) => {
    expect(readFixture(name)).toMatchObject({ stage: 'final', outcome: 'cancelled', status })
  })

  it('a termination that had errors is cancelled, not failed', () => {
    const body = edited('argocd-sync-terminated', {
      'app.status.operationState.phase': 'Error',
      'app.status.operationState.message': 'Operation termination had errors'
    })
    expect(read('argocd', body).outcome).toBe('cancelled')
  })

  it('a rollback to an earlier history entry, after the deploy it replaces', () => {
    expect(readFixture('argocd-rollback')).toMatchObject({
      outcome: 'success',
      version: C2,
      previousVersion: C4,
      rollback: true,
      user: 'carol',
      artifact: IMAGE
    })
  })

  it('a re-sync of the revision already deployed is no rollback', () => {
    const resync = '2025-03-10T10:00:00Z'
    const body = edited('argocd-sync-healthy', { 'app.status.operationState.startedAt': resync })
    const history = valueAt(body, ['app', 'status', 'history']) as Json[]
    history.push({ ...history[2], id: 14, deployStartedAt: resync })
    expect(read('argocd', body)).toMatchObject({
      version: C2,
      previousVersion: C2,
      rollback: false
    })
  })

  it("a multi-source app: the first source's revision, the others in metadata", () => {
    expect(readFixture('argocd-multi-source')).toMatchObject({
      deployKey: 'argocd/payments@2025-03-12T12:00:03.000Z',
      // No annotations: the Application's name and its destination's namespace.
      service: 'payments',
      environment: 'payments',
      version: 'c5b9994cd788a1d7e806887b0e20bc1d59e3e564',
      previousVersion: '57b39bfdf1a5d4ca60236ecee6864c55bac4bc5c',
      user: 'argocd',
      repository: 'https://github.com/acme/payments-deploy.git',
      link: { url: 'https://argocd.acme.example/applications/argocd/payments' },
      metadata: {
        project: 'payments',
        cluster: 'prod-eu-1',
        sources: [
          { repository: 'https://charts.acme.example', revision: '2.3.1' },
          {
            repository: 'https://github.com/acme/payments-values.git',
            revision: '8d2d88f43a5cfe9d962e6edb52065b3de8818e6e'
          }
        ]
      }
    })
  })

  it('an Application that never synced records nothing', () => {
    const never = { phase: null, startedAt: null, operation: null }
    for (const operationState of [never, undefined]) {
      const body = edited('argocd-sync-healthy', { 'app.status.operationState': operationState })
      expect(readNotification('argocd', body)).toEqual({
        ignored: 'the Application has no sync operation'
      })
    }
  })

  it('without a destination namespace or an annotation, no environment', () => {
    const body = edited('argocd-multi-source', { 'app.spec.destination.namespace': undefined })
    expect(read('argocd', body).environment).toBeUndefined()
  })

  it.each([
    [
      'https://argocd.acme.example/base',
      'https://argocd.acme.example/base/applications/argocd/shop'
    ],
    ['http://argocd.internal:8080/', 'http://argocd.internal:8080/applications/argocd/shop'],
    ['javascript:alert(1)', undefined],
    ['ftp://argocd.acme.example', undefined],
    ['https://admin:secret@argocd.acme.example', undefined],
    ['https://argocd.acme.example/?next=evil', undefined],
    ['https://argocd.acme.example/#x', undefined],
    ['argocd.acme.example', undefined],
    [42, undefined]
  ])('the link for Argo CD at %s: %s', (argocdUrl, url) => {
    const body = edited('argocd-sync-healthy', { 'context.argocdUrl': argocdUrl })
    expect(read('argocd', body).link?.url).toBe(url)
  })

  it.each([
    ['2025-03-10T10:14:41.5+01:00', Date.parse('2025-03-10T09:14:41.500Z')],
    ['2025-03-10T09:14:41.123456789Z', Date.parse('2025-03-10T09:14:41.123Z')],
    ['2025-03-10 09:14:41Z', undefined],
    ['2025-03-10T09:14:41', undefined],
    ['2025-03-10', undefined],
    ['1741598081', undefined],
    [1741598081000, undefined],
    ['2025-02-30T09:14:41Z', undefined],
    ['2025-13-01T09:14:41Z', undefined],
    ['2025-03-10T24:00:00Z', undefined],
    ['2025-03-10T09:14:41+24:00', undefined],
    ['1969-12-31T23:59:59Z', undefined]
  ])('finishedAt %s is read strictly: %s', (finishedAt, expected) => {
    const body = edited('argocd-sync-healthy', {
      'app.status.operationState.finishedAt': finishedAt
    })
    expect(read('argocd', body).finishedAt).toBe(expected)
  })

  it('an annotation that is not a clean line gives way to the Application name', () => {
    for (const service of [
      'shop\u0007',
      'shop\u202egnp.exe',
      'shop\u200b',
      'x'.repeat(254),
      '  ',
      7
    ]) {
      const body = fixture('argocd-sync-healthy')
      withValueAt(body, ['app', 'metadata', 'annotations', 'change-tracking/service'], service)
      expect(read('argocd', body).service).toBe('shop')
    }
  })

  it('an image with a digest that is not an image reference is no artifact', () => {
    const images = [IMAGE.replace('acme', 'ACME'), `pkg:oci/web@${IMAGE}`]
    const body = edited('argocd-sync-healthy', { 'app.status.summary.images': images })
    expect(read('argocd', body).artifact).toBeUndefined()
  })

  it('reads only the latest entries of a long history', () => {
    const body = edited('argocd-sync-failed', {
      'app.status.operationState.syncResult.revision': C0
    })
    const [first, second] = valueAt(body, ['app', 'status', 'history']) as Json[]
    expect([first.revision, second.revision]).toEqual([C0, C1])
    expect(read('argocd', body)).toMatchObject({ previousVersion: C2, rollback: true })
    // C0's entry is far back: a sync to it is not known as a rollback.
    const long = [first, ...Array.from({ length: 50_000 }, (_, id) => ({ ...second, id }))]
    withValueAt(body, ['app', 'status', 'history'], long)
    expect(read('argocd', body)).toMatchObject({ previousVersion: C1, rollback: false })
  })
})

const FLUX_SHA = '9d6722c056f844d5213a1219c3b804816ad69586'
const OCI_DIGEST = 'sha256:f9bdb672d3a975cb6a3c1133e08e035274142198ec20bd59f093162a3e082860'
const VALUES_1_4 = 'sha256:72055aa88ceac157ffa676ea5feaea1120dc902ed99b2559c60414677b8bc60e'
const WEB_UID = '4b2a5a54-021f-414d-a254-2a4d6242cdff'

describe('readNotification: Flux', () => {
  it("a Kustomization's success: every field of the change", () => {
    expect(readFixture('flux-kustomization-succeeded')).toEqual({
      controller: 'flux',
      deployKey: `aee65b84-279e-45e6-9938-e084ff616167@main@sha1:${FLUX_SHA}`,
      object: 'Kustomization/flux-system/shop',
      stage: 'final',
      service: 'shop',
      environment: 'production',
      version: FLUX_SHA,
      finishedAt: Date.parse('2025-03-12T08:30:17Z'),
      outcome: 'success',
      status: 'ReconciliationSucceeded',
      message: 'Reconciliation finished in 4.127s, next run in 10m0s',
      rollback: false,
      repository: 'https://github.com/acme/fleet',
      metadata: {
        commit_status: 'update',
        cluster: 'prod-eu-1',
        kind: 'Kustomization',
        uid: 'aee65b84-279e-45e6-9938-e084ff616167',
        reason: 'ReconciliationSucceeded',
        severity: 'info',
        controller: 'kustomize-controller',
        revision: `main@sha1:${FLUX_SHA}`
      }
    })
  })

  it("a Kustomization's failed health check: failure, with Flux's words", () => {
    expect(readFixture('flux-kustomization-failed')).toMatchObject({
      outcome: 'failure',
      status: 'HealthCheckFailed',
      version: 'a3c0ef151b1dc7db832c1264629ba4ded634c3fe',
      message: expect.stringMatching(/^health check failed after 5m0.032451s: timeout waiting for/)
    })
  })

  it('an OCI source: the digest is the version, and the image is the artifact', () => {
    const oci = readFixture('flux-kustomization-oci-succeeded')
    expect(oci).toMatchObject({
      service: 'podinfo',
      environment: 'staging',
      version: OCI_DIGEST,
      artifact: `ghcr.io/acme/manifests/podinfo:v6.7.1@${OCI_DIGEST}`,
      repository: 'oci://ghcr.io/acme/manifests/podinfo',
      metadata: { originRevision: 'main@sha1:b54d2ebcfe32927ffc7d86398eac9ea9e7f620ca' }
    })
  })

  it("a HelmRelease's install: the chart's version, its values' checksum in the deploy's key only", () => {
    const installed = readFixture('flux-helmrelease-install-succeeded')
    expect(installed).toMatchObject({
      deployKey: `${WEB_UID}@1.4.0@${VALUES_1_4}`,
      object: 'HelmRelease/shop/web',
      service: 'web',
      environment: 'staging',
      version: '1.4.0',
      outcome: 'success',
      status: 'InstallSucceeded',
      metadata: { 'app-version': '2.8.0', controller: 'helm-controller' }
    })
    expect(installed.metadata).not.toHaveProperty('token')
    expect(installed.artifact).toBeUndefined()
  })

  it.each([
    ['flux-helmrelease-install-failed', 'failure', 'InstallFailed', '1.4.0'],
    ['flux-helmrelease-upgrade-succeeded', 'success', 'UpgradeSucceeded', '1.5.0'],
    ['flux-helmrelease-upgrade-failed', 'failure', 'UpgradeFailed', '1.6.0']
  ])('%s: %s (%s) of chart version %s', (name, outcome, status, version) => {
    expect(readFixture(name)).toMatchObject({ outcome, status, version, rollback: false })
  })

  it("a failure keeps Helm's logs, lines and all", () => {
    expect(readFixture('flux-helmrelease-upgrade-failed').message).toContain(
      "[Deployment/shop/web status: 'Failed']\n\nLast Helm logs:\n\nlooks like"
    )
  })

  it('an upgrade rolled back: a rollback to the chart version before', () => {
    expect(readFixture('flux-helmrelease-rollback-succeeded')).toMatchObject({
      outcome: 'success',
      status: 'RollbackSucceeded',
      version: '1.5.0',
      rollback: true
    })
  })

  it.each([['flux-kustomization-progressing'], ['flux-kustomization-dependency-not-ready']])(
    '%s records nothing',
    name => {
      expect(readNotification('flux', fixture(name))).toEqual({
        ignored: "Flux's reason records no deploy"
      })
    }
  )

  it("a source's own event records nothing", () => {
    const body = edited('flux-kustomization-succeeded', {
      'involvedObject.kind': 'GitRepository',
      reason: 'NewArtifact'
    })
    expect(readNotification('flux', body)).toHaveProperty('ignored')
  })

  it.each([
    [`main@sha1:${FLUX_SHA}`, FLUX_SHA],
    [`refs/heads/release/2.x@sha1:${FLUX_SHA}`, FLUX_SHA],
    [`sha1:${FLUX_SHA}`, FLUX_SHA],
    [`main/${FLUX_SHA}`, FLUX_SHA],
    [`latest@${OCI_DIGEST}`, OCI_DIGEST],
    [OCI_DIGEST, OCI_DIGEST],
    ['6.5.4', '6.5.4'],
    ['6.5.4+a1b2c3d4e5f6', '6.5.4+a1b2c3d4e5f6'],
    [`main@sha1:${FLUX_SHA.slice(1)}`, `main@sha1:${FLUX_SHA.slice(1)}`]
  ])('revision %s is version %s', (revision, version) => {
    const body = edited('flux-kustomization-succeeded', { 'metadata.revision': revision })
    expect(read('flux', body).version).toBe(version)
  })

  it('an OCI digest without a tag is still an image; a source not on OCI has no artifact', () => {
    const body = edited('flux-kustomization-oci-succeeded', { 'metadata.revision': OCI_DIGEST })
    expect(read('flux', body).artifact).toBe(`ghcr.io/acme/manifests/podinfo@${OCI_DIGEST}`)
    withValueAt(body, ['metadata', 'repository'], 'https://github.com/acme/manifests')
    expect(read('flux', body).artifact).toBeUndefined()
  })

  it("passes on at most sixteen of the Alert's other metadata, each a clean line", () => {
    const body = edited('flux-kustomization-succeeded', {
      metadata: {
        revision: `main@sha1:${FLUX_SHA}`,
        bell: 'ding\u0007',
        ...Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`key${i}`, `value${i}`]))
      }
    })
    const { metadata } = read('flux', body)
    expect(metadata).not.toHaveProperty('bell')
    expect(Object.keys(metadata).filter(key => key.startsWith('key'))).toHaveLength(15)
  })
})

/** A value no body should have its reason quote: controls, bidi and markup. */
const MARKER = 'MARKER\u0007\u202e<b>'

describe('a body that is not the documented shape', () => {
  const argo = (path: string, value: unknown) => edited('argocd-sync-healthy', { [path]: value })
  const flux = (path: string, value: unknown) =>
    edited('flux-kustomization-succeeded', { [path]: value })
  it.each([
    ['argocd', 'null', null],
    ['argocd', 'a string', MARKER],
    ['argocd', 'an array', [MARKER]],
    ['argocd', 'no app', { context: { argocdUrl: MARKER } }],
    ['argocd', 'app a string', { app: MARKER }],
    ['argocd', 'a name that Kubernetes refuses', argo('app.metadata.name', MARKER)],
    ['argocd', 'no namespace', argo('app.metadata.namespace', undefined)],
    ['argocd', 'an unknown phase', argo('app.status.operationState.phase', MARKER)],
    ['argocd', 'a start that is no time', argo('app.status.operationState.startedAt', MARKER)],
    ['argocd', 'no start', argo('app.status.operationState.startedAt', undefined)],
    ['flux', 'null', null],
    ['flux', 'no involved object', { reason: MARKER }],
    ['flux', 'a kind that is a number', flux('involvedObject.kind', 42)],
    ['flux', 'no reason', flux('reason', undefined)],
    ['flux', 'a name that Kubernetes refuses', flux('involvedObject.name', MARKER)],
    ['flux', 'no uid', flux('involvedObject.uid', undefined)],
    ['flux', 'no revision', flux('metadata.revision', undefined)],
    ['flux', 'a revision with a control character', flux('metadata.revision', MARKER)],
    ['flux', 'metadata a string', flux('metadata', MARKER)]
  ])('%s, %s: invalid, in one short line that quotes nothing of it', (controller, _, body) => {
    const result = readNotification(controller as Controller, body)
    expect(result).toEqual({ invalid: expect.any(String) })
    const { invalid } = result as { invalid: string }
    expect(invalid).not.toMatch(/MARKER|\n/)
    expect(invalid.length).toBeLessThan(100)
  })
})

/** Every string leaf of a JSON value, by its path. */
function stringPaths(value: unknown, path: string[] = []): string[][] {
  if (typeof value === 'string') return [path]
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, item]) => stringPaths(item, [...path, key]))
}

/** Every string a notification holds, however deep. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, item]) => [key, ...stringsOf(item)])
}

const UNSEEN = new RegExp(`[${UNSEEN_CHARACTERS}]`, 'u')
const UNSAFE_IN_MESSAGE = new RegExp(`(?![\\t\\n\\r])[${UNSEEN_CHARACTERS}]`, 'u')
/** What the biggest notification takes as JSON, whatever the body's size. */
const MAX_NOTIFICATION_JSON_CHARS = 32 * 1024

/** What must hold of any body's reading: clean, bounded text, names as --service takes them. */
function expectSafe(result: ReturnType<typeof readNotification>): void {
  expect(JSON.stringify(result).length).toBeLessThan(MAX_NOTIFICATION_JSON_CHARS)
  if (!('notification' in result)) return
  const { message, service, environment, ...rest } = result.notification
  for (const text of stringsOf(rest)) expect(text).not.toMatch(UNSEEN)
  expect(message ?? '').not.toMatch(UNSAFE_IN_MESSAGE)
  // Characters, as a message is cut: an astral one is two UTF-16 units.
  expect(Array.from(message ?? '').length).toBeLessThanOrEqual(MAX_NOTIFICATION_MESSAGE_CHARS)
  for (const name of [service, environment].filter(name => name !== undefined)) {
    expect(name.length).toBeLessThanOrEqual(MAX_NAME_CHARS)
    expect(() => parseText(Inputs.Service, name, false)).not.toThrow()
    expect(name).not.toMatch(UNSEEN)
  }
}

describe('hostile text in any field', () => {
  const leaves = FIXTURE_NAMES.flatMap(name =>
    stringPaths(fixture(name)).map(path => ({ name, path }))
  )

  it('is never passed on raw, nor quoted, and what is read stays bounded', () => {
    fc.assert(
      fc.property(fc.constantFrom(...leaves), hostileText, ({ name, path }, hostile) => {
        const result = readNotification(
          controllerOf(name),
          withValueAt(fixture(name), path, hostile)
        )
        expectSafe(result)
        const reason = 'invalid' in result ? result.invalid : ''
        if (hostile.trim().length >= 12) expect(reason).not.toContain(hostile.trim())
      }),
      { numRuns: 300 }
    )
  })

  it('a megabyte in any one string of a body: read at its bounds, or refused', () => {
    const huge = `${'a'.repeat(500_000)}\u202e\u0007${'b'.repeat(500_000)}`
    for (const { name, path } of leaves) {
      expectSafe(readNotification(controllerOf(name), withValueAt(fixture(name), path, huge)))
    }
  })

  it('a megabyte message is cut, and cut before its first unsafe character', () => {
    const long = `line one\nline two\t${'x'.repeat(1_000_000)}`
    const body = edited('flux-kustomization-failed', { message: long })
    expect(read('flux', body).message).toHaveLength(MAX_NOTIFICATION_MESSAGE_CHARS)
    withValueAt(body, ['message'], 'health check failed\u001b[31m red\u202e')
    expect(read('flux', body).message).toBe('health check failed…')
  })
})

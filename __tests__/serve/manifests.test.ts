/**
 * deploy/kubernetes/: each manifest passes Kubernetes' schema offline, the kustomization applies
 * them all, and the Deployment keeps the receiver's rules: one replica recreated, non-root on a
 * read-only root, its state on the claim, probes on its routes, the Secret's keys as variables.
 */
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { Namespace } from 'kubernetes-models/v1/Namespace'
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim'
import { Secret } from 'kubernetes-models/v1/Secret'
import { Service } from 'kubernetes-models/v1/Service'
import { parseAllDocuments } from 'yaml'
import { IN_CLUSTER_URL } from '../../src/serve/print-config.ts'

const FOLDER = 'deploy/kubernetes'
const read = (name: string): Array<{ kind?: string }> =>
  parseAllDocuments(readFileSync(`${FOLDER}/${name}`, 'utf8')).map(document => {
    expect(document.errors).toEqual([])
    return document.toJS() as { kind?: string }
  })

const kustomization = read('kustomization.yaml')[0] as { namespace: string; resources: string[] }
const manifests = kustomization.resources.flatMap(name => read(name))
/** The one manifest of this kind, as its model (which validate() checks against the schema). */
function only<T>(kind: string, Model: new (data: never) => T): T {
  const found = manifests.filter(manifest => manifest.kind === kind)
  expect(found).toHaveLength(1)
  return new Model(found[0] as never)
}
const deployment = () => only('Deployment', Deployment)
const pod = () => deployment().spec!.template.spec!
const container = () => pod().containers[0]

describe('deploy/kubernetes', () => {
  it('applies every manifest of the folder, in the receiver’s namespace', () => {
    const files = readdirSync(FOLDER).filter(name => name !== 'kustomization.yaml')
    expect([...kustomization.resources].sort()).toEqual(files.sort())
    expect(kustomization.namespace).toBe(only('Namespace', Namespace).metadata?.name)
  })

  it.each([
    ['Deployment', Deployment],
    ['Namespace', Namespace],
    ['PersistentVolumeClaim', PersistentVolumeClaim],
    ['Secret', Secret],
    ['Service', Service]
  ])('holds one %s that passes Kubernetes’ schema', (kind, Model) => {
    const manifest = only(kind, Model as new (data: never) => { validate(): void })
    expect(() => manifest.validate()).not.toThrow()
  })

  it('fails the schema check on a manifest that breaks it', () => {
    const broken = deployment()
    Object.assign(broken.spec!, { replicas: 'one' })
    expect(() => broken.validate()).toThrow(/replicas must be integer/)
  })

  it('runs one receiver, recreated, from the image’s serve command', () => {
    const { spec } = deployment()
    expect(spec?.replicas).toBe(1)
    expect(spec?.strategy).toEqual({ type: 'Recreate' })
    expect(container().image).toBe('ghcr.io/OWNER/change-tracking-action:1')
    expect(container().args).toEqual(['serve'])
  })

  it('runs it as a non-root user on a read-only root file system, without privileges', () => {
    expect(pod().securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      fsGroup: 1000
    })
    expect(container().securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] }
    })
  })

  it('keeps the state folder on the ReadWriteOnce claim', () => {
    const claim = only('PersistentVolumeClaim', PersistentVolumeClaim)
    expect(claim.spec?.accessModes).toEqual(['ReadWriteOnce'])
    const volume = pod().volumes?.find(
      ({ persistentVolumeClaim }) => persistentVolumeClaim?.claimName === claim.metadata?.name
    )
    const mount = container().volumeMounts?.find(({ name }) => name === volume?.name)
    const stateDir = container().env?.find(({ name }) => name === 'CHANGE_TRACKING_STATE_DIR')
    expect(mount?.mountPath).toBe('/var/lib/change-tracking')
    expect(stateDir?.value).toBe(mount?.mountPath)
  })

  it('is ready on /healthz and live on /livez, on the port the Service names', () => {
    expect(container().readinessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' })
    expect(container().livenessProbe?.httpGet).toEqual({ path: '/livez', port: 'http' })
    const service = only('Service', Service)
    const [port] = service.spec?.ports ?? []
    expect(container().ports).toEqual([{ name: port.targetPort, containerPort: port.port }])
    expect(service.spec?.selector).toEqual(deployment().spec?.selector.matchLabels)
    const { hostname, port: urlPort } = new URL(IN_CLUSTER_URL)
    expect(hostname).toBe(`${service.metadata?.name}.${kustomization.namespace}.svc.cluster.local`)
    expect(Number(urlPort)).toBe(port.port)
  })

  it('reads the key, the address and the webhook secret from the Secret, which holds none yet', () => {
    const secret = only('Secret', Secret)
    const fromSecret = (container().env ?? []).filter(({ valueFrom }) => valueFrom)
    expect(fromSecret.map(({ name }) => name).sort()).toEqual([
      'CHANGE_TRACKING_API_KEY',
      'CHANGE_TRACKING_BASE_URL',
      'CHANGE_TRACKING_WEBHOOK_SECRET'
    ])
    for (const { valueFrom } of fromSecret) {
      expect(valueFrom?.secretKeyRef?.name).toBe(secret.metadata?.name)
      expect(secret.stringData?.[valueFrom?.secretKeyRef?.key ?? '']).toBe('')
    }
  })
})

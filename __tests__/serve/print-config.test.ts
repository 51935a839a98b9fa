/**
 * `serve --print-config`: manifests that parse, pass the controllers' own schemas, name the
 * receiver's address, reference the webhook secret without its value, and (for Argo CD) send
 * exactly what the receiver reads.
 */
import { describe, expect, it } from '@jest/globals'
import { readdirSync, readFileSync } from 'node:fs'
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Alert } from '@kubernetes-models/flux-cd/notification.toolkit.fluxcd.io/v1beta3/Alert'
import { Provider } from '@kubernetes-models/flux-cd/notification.toolkit.fluxcd.io/v1beta3/Provider'
import { parse, parseAllDocuments } from 'yaml'
import { readNotification } from '../../src/serve/notifications.ts'
import {
  ARGOCD_SECRET_KEY,
  FLUX_SECRET_NAME,
  IN_CLUSTER_URL,
  printConfig
} from '../../src/serve/print-config.ts'

/** Each YAML document, as the model of its kind (validated against the kind's schema). */
const documents = (text: string): never[] =>
  parseAllDocuments(text).map(document => {
    expect(document.errors).toEqual([])
    return document.toJS() as never
  })

interface WebhookService {
  url: string
  headers: Array<{ name: string; value: string }>
}
type Template = { webhook: Record<string, { method: string; body: string }> }
type Condition = { description: string; when: string; oncePer: string; send: string[] }

/** The ConfigMap's entries, each itself YAML, as Argo CD reads them. */
function argocdEntries(url?: string) {
  const configMap = new ConfigMap(documents(printConfig('argocd', url))[0])
  configMap.validate()
  const data = configMap.data ?? {}
  return {
    configMap,
    service: parse(data['service.webhook.change-tracking']) as WebhookService,
    template: parse(data['template.change-tracking']) as Template,
    trigger: parse(data['trigger.on-change-tracking']) as Condition[]
  }
}

/**
 * Argo CD's rendering of the body, for the forms the template uses: `toJson` of a path, of a
 * `dig` (its default when a field is missing), and of each history entry's fields in a range.
 */
function render(template: string, vars: { app: unknown; context: unknown }): string {
  const pathOf = (scope: unknown, path: string[]): unknown =>
    path.reduce<unknown>(
      (value, key) =>
        typeof value === 'object' && value !== null
          ? (value as Record<string, unknown>)[key]
          : undefined,
      scope
    )
  const json = (value: unknown) => JSON.stringify(value ?? null)
  const strings = (text: string) => [...text.matchAll(/"([^"]+)"/g)].map(match => match[1])
  return template
    .replace(
      /\{\{range \$index, \$entry := \(dig ((?:"\w+" )+)\(list\) \.app\)\}\}\{\{if \$index\}\},\{\{end\}\}([\s\S]*?)\{\{end\}\}/,
      (_, keys: string, entry: string) =>
        ((pathOf(vars.app, strings(keys)) as unknown[]) ?? [])
          .map(item =>
            entry.replace(/\{\{toJson \$entry\.(\w+)\}\}/g, (__, key: string) =>
              json(pathOf(item, [key]))
            )
          )
          .join(',')
    )
    .replace(/\{\{toJson \(dig ((?:"\w+" )+)nil \.app\)\}\}/g, (_, keys: string) =>
      json(pathOf(vars.app, strings(keys)))
    )
    .replace(
      /\{\{toJson \.(app|context)\.([\w.]+)\}\}/g,
      (_, root: 'app' | 'context', path: string) => json(pathOf(vars[root], path.split('.')))
    )
}

describe('--print-config argocd', () => {
  it('makes a ConfigMap whose webhook service calls the receiver with the secret referenced', () => {
    const { configMap, service } = argocdEntries()
    expect(configMap.metadata).toEqual({ name: 'argocd-notifications-cm', namespace: 'argocd' })
    expect(service).toEqual({
      url: `${IN_CLUSTER_URL}/argocd`,
      headers: [
        { name: 'Authorization', value: `Bearer $${ARGOCD_SECRET_KEY}` },
        { name: 'Content-Type', value: 'application/json' }
      ]
    })
  })

  it('names the public address it is given', () => {
    expect(argocdEntries('https://hooks.example.com/change-tracking/').service.url).toBe(
      'https://hooks.example.com/change-tracking/argocd'
    )
  })

  it('sends at a sync’s start, success, healthy resources, failure and degraded health, once per operation', () => {
    const { trigger, template } = argocdEntries()
    expect(trigger.map((condition: { when: string }) => condition.when)).toEqual([
      "app.status.operationState.phase in ['Running']",
      "app.status.operationState.phase in ['Succeeded']",
      "app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Healthy'",
      "app.status.operationState.phase in ['Error', 'Failed']",
      "app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Degraded'"
    ])
    for (const condition of trigger) {
      expect(condition).toMatchObject({
        oncePer: 'app.status.operationState.startedAt',
        send: ['change-tracking']
      })
    }
    expect(template.webhook['change-tracking'].method).toBe('POST')
  })

  const applications = readdirSync('__tests__/fixtures/gitops').filter(name =>
    name.startsWith('argocd-')
  )

  it.each(applications)('sends what the receiver reads of %s', name => {
    const sent = JSON.parse(readFileSync(`__tests__/fixtures/gitops/${name}`, 'utf8'))
    const { template } = argocdEntries()
    // The whole Application, with what the template leaves out (its resources, its conditions).
    const app = { ...sent.app, status: { ...sent.app.status, resources: [{ kind: 'Pod' }] } }
    const body = JSON.parse(
      render(template.webhook['change-tracking'].body, { app, context: sent.context })
    )
    expect(body.app.status.resources).toBeUndefined()
    expect(readNotification('argocd', body)).toEqual(readNotification('argocd', sent))
  })

  it('gives null for what an Application lacks, as a body the receiver reads', () => {
    const { template } = argocdEntries()
    const app = { metadata: { name: 'never-synced', namespace: 'argocd' }, spec: {}, status: {} }
    const body = JSON.parse(render(template.webhook['change-tracking'].body, { app, context: {} }))
    expect(body.app.status.operationState.phase).toBeNull()
    expect(body.app.status.history).toEqual([])
    expect(readNotification('argocd', body)).toEqual({
      ignored: 'the Application has no sync operation'
    })
  })
})

describe('--print-config flux', () => {
  it('makes a generic-hmac Provider for the receiver, with its Secret referenced, and an Alert', () => {
    const [providerManifest, alertManifest] = documents(
      printConfig('flux', 'http://receiver.tools:9000')
    )
    const provider = new Provider(providerManifest)
    const alert = new Alert(alertManifest)
    provider.validate()
    alert.validate()
    expect(provider.spec).toEqual({
      type: 'generic-hmac',
      address: 'http://receiver.tools:9000/flux',
      secretRef: { name: FLUX_SECRET_NAME }
    })
    expect(alert.spec?.providerRef).toEqual({ name: provider.metadata?.name })
    expect(alert.spec?.eventSources.map(source => source.kind)).toEqual([
      'Kustomization',
      'HelmRelease'
    ])
    expect(alert.metadata?.namespace).toBe(provider.metadata?.namespace)
  })

  it('shows how an Alert names the service, environment and repository in eventMetadata', () => {
    const text = printConfig('flux')
    for (const key of ['service', 'environment', 'repository'])
      expect(text).toMatch(new RegExp(`^ {2}# {3}${key}: `, 'm'))
    // Once uncommented, the Alert stays valid.
    const alert = new Alert(documents(text.replace(/^ {2}# (eventMetadata:| {2})/gm, '  $1'))[1])
    alert.validate()
    expect(Object.keys(alert.spec?.eventMetadata ?? {})).toEqual([
      'service',
      'environment',
      'repository'
    ])
  })
})

describe('--public-url', () => {
  it.each(['ftp://receiver', 'http://user:pass@receiver', 'http://receiver/?q', 'receiver:8080'])(
    'refuses %s with one line',
    url => {
      expect(() => printConfig('flux', url)).toThrow(
        /^--public-url must be the http:\/\/ or https:\/\/ address/
      )
    }
  )
})

/**
 * `serve --print-config argocd|flux`: the controller's side of the set-up, for the receiver's
 * address, so that nobody copies it by hand. The webhook secret is referenced, never printed.
 */

export const CONTROLLERS = ['argocd', 'flux'] as const
export type PrintedController = (typeof CONTROLLERS)[number]

/** As deploy/kubernetes/ names the Service and its port. */
export const IN_CLUSTER_URL = 'http://change-tracking.change-tracking.svc.cluster.local:8080'
/** Where each controller finds the webhook secret. */
export const ARGOCD_SECRET_KEY = 'change-tracking-webhook-secret'
export const FLUX_SECRET_NAME = 'change-tracking-webhook'

/**
 * Only the Application's fields the receiver reads (its resource list can pass the size bound).
 * `dig` gives null for a field the Application lacks, where a plain path would fail the template.
 */
const ARGOCD_BODY = `{
  "app": {
    "metadata": {
      "name": {{toJson .app.metadata.name}},
      "namespace": {{toJson .app.metadata.namespace}},
      "annotations": {{toJson (dig "metadata" "annotations" nil .app)}}
    },
    "spec": {
      "project": {{toJson (dig "spec" "project" nil .app)}},
      "source": {{toJson (dig "spec" "source" nil .app)}},
      "sources": {{toJson (dig "spec" "sources" nil .app)}},
      "destination": {{toJson (dig "spec" "destination" nil .app)}}
    },
    "status": {
      "sync": {
        "revision": {{toJson (dig "status" "sync" "revision" nil .app)}},
        "revisions": {{toJson (dig "status" "sync" "revisions" nil .app)}}
      },
      "health": {"status": {{toJson (dig "status" "health" "status" nil .app)}}},
      "operationState": {
        "phase": {{toJson (dig "status" "operationState" "phase" nil .app)}},
        "message": {{toJson (dig "status" "operationState" "message" nil .app)}},
        "startedAt": {{toJson (dig "status" "operationState" "startedAt" nil .app)}},
        "finishedAt": {{toJson (dig "status" "operationState" "finishedAt" nil .app)}},
        "operation": {
          "initiatedBy": {
            "username": {{toJson (dig "status" "operationState" "operation" "initiatedBy" "username" nil .app)}},
            "automated": {{toJson (dig "status" "operationState" "operation" "initiatedBy" "automated" nil .app)}}
          },
          "sync": {
            "revision": {{toJson (dig "status" "operationState" "operation" "sync" "revision" nil .app)}},
            "revisions": {{toJson (dig "status" "operationState" "operation" "sync" "revisions" nil .app)}}
          }
        },
        "syncResult": {
          "revision": {{toJson (dig "status" "operationState" "syncResult" "revision" nil .app)}},
          "revisions": {{toJson (dig "status" "operationState" "syncResult" "revisions" nil .app)}}
        }
      },
      "history": [{{range $index, $entry := (dig "status" "history" (list) .app)}}{{if $index}},{{end}}
        {"id": {{toJson $entry.id}}, "revision": {{toJson $entry.revision}}, "revisions": {{toJson $entry.revisions}}, "deployStartedAt": {{toJson $entry.deployStartedAt}}, "deployedAt": {{toJson $entry.deployedAt}}}{{end}}
      ],
      "summary": {"images": {{toJson (dig "status" "summary" "images" nil .app)}}}
    }
  },
  "context": {"argocdUrl": {{toJson .context.argocdUrl}}}
}`

/** Each condition is sent once per operation. */
// prettier-ignore
const ARGOCD_CONDITIONS: Array<[description: string, when: string]> = [
  ['A sync started.', "app.status.operationState.phase in ['Running']"],
  ['A sync succeeded; its resources may still progress.', "app.status.operationState.phase in ['Succeeded']"],
  ['A sync succeeded and its resources are healthy.', "app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Healthy'"],
  ['A sync failed or was terminated.', "app.status.operationState.phase in ['Error', 'Failed']"],
  ['A synced application degraded.', "app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Degraded'"]
]

function indented(text: string, spaces: number): string {
  return text.replace(/^(?=.)/gm, ' '.repeat(spaces))
}

function argocd(url: string): string {
  const triggers = ARGOCD_CONDITIONS.map(
    ([description, when]) =>
      `- description: ${description}\n  when: ${when}\n  oncePer: app.status.operationState.startedAt\n  send: [change-tracking]\n`
  ).join('')
  return `# Argo CD: the receiver's webhook service, the template that sends what it reads, and a trigger
# that sends it when a sync starts, succeeds, becomes healthy, fails or degrades: each once per
# operation. Merge these entries into argocd-notifications-cm, in Argo CD's namespace:
#   kubectl -n argocd patch configmap argocd-notifications-cm --type merge --patch-file argocd.yaml
# Put the webhook secret in argocd-notifications-secret, under the key ${ARGOCD_SECRET_KEY}.
# Then subscribe each Application (or an AppProject) with this annotation:
#   notifications.argoproj.io/subscribe.on-change-tracking.change-tracking: ""
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-notifications-cm
  namespace: argocd
data:
  service.webhook.change-tracking: |
    url: ${JSON.stringify(`${url}/argocd`)}
    headers:
      - name: Authorization
        value: Bearer $${ARGOCD_SECRET_KEY}
      - name: Content-Type
        value: application/json
  template.change-tracking: |
    webhook:
      change-tracking:
        method: POST
        body: |
${indented(ARGOCD_BODY, 10)}
  trigger.on-change-tracking: |
${indented(triggers, 4)}`
}

function flux(url: string): string {
  return `# Flux: a Provider that signs each event with the webhook secret (generic-hmac), and an Alert
# that sends it the events of Kustomizations and HelmReleases. The Secret, in the Provider's
# namespace, holds the webhook secret under the key "token":
#   kubectl -n flux-system create secret generic ${FLUX_SECRET_NAME} --from-literal=token="$WEBHOOK_SECRET"
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata:
  name: change-tracking
  namespace: flux-system
spec:
  type: generic-hmac
  address: ${JSON.stringify(`${url}/flux`)}
  secretRef:
    name: ${FLUX_SECRET_NAME}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata:
  name: change-tracking
  namespace: flux-system
spec:
  providerRef:
    name: change-tracking
  eventSeverity: info
  eventSources:
    - kind: Kustomization
      name: "*"
    - kind: HelmRelease
      name: "*"
  # A change's service is the object's name and its environment the object's namespace; an
  # Alert per service can name them, with the source repository's URL, so that the receiver
  # reads what shipped:
  # eventMetadata:
  #   service: checkout
  #   environment: production
  #   repository: https://github.com/OWNER/REPOSITORY
`
}

/** Throws a one-line error when `publicUrl` is not an http(s) address without credentials. */
export function printConfig(controller: PrintedController, publicUrl = IN_CLUSTER_URL): string {
  const url = URL.parse(publicUrl)
  const web = url?.protocol === 'http:' || url?.protocol === 'https:'
  if (!url || !web || url.username || url.password || /[?#]/.test(url.href)) {
    throw new Error(
      '--public-url must be the http:// or https:// address Argo CD or Flux reaches the receiver at, with no user name, query or fragment.'
    )
  }
  const base = url.href.replace(/\/+$/, '')
  return controller === 'argocd' ? argocd(base) : flux(base)
}

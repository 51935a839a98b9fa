/**
 * A dry run: the same interface as the service client, but each request is handed to `print`
 * (which shows it with the key masked) instead of being sent, and each answer is a placeholder of
 * the real type. The report of a dry run shows no answer and passes none on as an output.
 */
import {
  serviceRequests,
  type ChangeRecord,
  type ChangeRequest,
  type ChangeService
} from './client.ts'
import { requestUrl, serviceRoot, type ServiceRequest } from './request.ts'

/** The id a dry run answers for a change, a heartbeat's signal and each event. */
export const DRY_RUN_ID = 'dry-run'

export type PrintRequest = (request: ServiceRequest, url: URL) => void

export class DryRunClient implements ChangeService {
  private readonly root: URL
  private readonly print: PrintRequest

  constructor(baseUrl: URL, print: PrintRequest) {
    this.root = serviceRoot(baseUrl)
    this.print = print
  }

  async createChange(change: ChangeRequest): Promise<string> {
    this.show(serviceRequests.createChange(change))
    return DRY_RUN_ID
  }

  /** The change as far as the request knows it: its id. */
  async getChange(changeId: string): Promise<ChangeRecord> {
    this.show(serviceRequests.getChange(changeId))
    return { id: changeId }
  }

  async sendEvents(ndjson: string | Uint8Array, count: number): Promise<string[]> {
    this.show(serviceRequests.sendEvents(ndjson))
    return new Array<string>(count).fill(DRY_RUN_ID)
  }

  async getEventResults(eventIds: readonly string[]): Promise<unknown> {
    this.show(serviceRequests.getEventResults(eventIds))
    return []
  }

  async sendHeartbeat(heartbeatId: string): Promise<string> {
    this.show(serviceRequests.sendHeartbeat(heartbeatId))
    return DRY_RUN_ID
  }

  async hello(): Promise<'OK'> {
    this.show(serviceRequests.hello())
    return 'OK'
  }

  private show(request: ServiceRequest): void {
    this.print(request, requestUrl(this.root, request))
  }
}

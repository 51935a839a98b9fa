/**
 * A dry run: the same interface as the service client, but each request is handed to `print`
 * (which shows it with the key masked) instead of being sent, and every answer is `undefined`:
 * not sent.
 */
import { serviceRequests, type ChangeRequest, type ChangeService } from './client.ts'
import { requestUrl, type ServiceRequest } from './request.ts'

export type PrintRequest = (request: ServiceRequest, url: URL) => void

export class DryRunClient implements ChangeService {
  private readonly baseUrl: URL
  private readonly print: PrintRequest

  constructor(baseUrl: URL, print: PrintRequest) {
    this.baseUrl = baseUrl
    this.print = print
  }

  async createChange(change: ChangeRequest): Promise<undefined> {
    this.show(serviceRequests.createChange(change))
  }

  async getChange(changeId: string): Promise<undefined> {
    this.show(serviceRequests.getChange(changeId))
  }

  async sendEvents(ndjson: string | Uint8Array): Promise<undefined> {
    this.show(serviceRequests.sendEvents(ndjson))
  }

  async getEventResults(eventIds: readonly string[]): Promise<undefined> {
    this.show(serviceRequests.getEventResults(eventIds))
  }

  async sendHeartbeat(heartbeatId: string): Promise<undefined> {
    this.show(serviceRequests.sendHeartbeat(heartbeatId))
  }

  async hello(): Promise<undefined> {
    this.show(serviceRequests.hello())
  }

  private show(request: ServiceRequest): void {
    this.print(request, requestUrl(this.baseUrl, request))
  }
}

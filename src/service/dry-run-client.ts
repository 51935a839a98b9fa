/**
 * A dry run: the service client's requests, each handed to `print` (which shows it with the key
 * masked) instead of being sent, and answered with a placeholder of the real type. The report of
 * a dry run shows no answer and passes none on as an output.
 */
import { ServiceEndpoints, type Endpoint } from './client.ts'
import { requestUrl, type ServiceRequest } from './request.ts'

export type PrintRequest = (request: ServiceRequest, url: URL) => void

export class DryRunClient extends ServiceEndpoints {
  private readonly root: URL
  private readonly print: PrintRequest

  /** `baseUrl` is the service root, as the base-url setting gives it. */
  constructor(baseUrl: URL, print: PrintRequest) {
    super()
    this.root = baseUrl
    this.print = print
  }

  protected async exchange<T>(
    _endpoint: Endpoint,
    request: ServiceRequest,
    _read: unknown,
    placeholder: T
  ): Promise<T> {
    this.print(request, requestUrl(this.root, request))
    return placeholder
  }
}

/**
 * When a loopback server of this process (the emulator, the fake GitHub API) receives a request,
 * from Node's own report of every request an HTTP(S) server starts: a test acts at the moment a
 * call is in flight, whatever the machine's load, without polling.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import { parseRoute, routeMatches } from '../../emulator/faults.ts'

/** Node publishes each request a server starts on this channel, before its 'request' event. */
const REQUEST_START = 'http.server.request.start'

/**
 * Resolves when the server listening on `server.port` receives a request to `route` ('POST
 * /v2/change'; '*' matches one path segment), as it arrives: before the server has answered it.
 */
export function arrivalOf(server: { port: number }, route: string): Promise<void> {
  const pattern = parseRoute(route)
  return new Promise(resolve => {
    const onStart = (message: unknown): void => {
      const { request, socket } = message as { request: IncomingMessage; socket: Socket }
      const path = (request.url ?? '').split('?')[0]
      if (socket.localPort !== server.port) return
      if (!routeMatches(pattern, request.method ?? '', path)) return
      unsubscribe(REQUEST_START, onStart)
      resolve()
    }
    subscribe(REQUEST_START, onStart)
  })
}

// The cold-start baseline: the least a Node script can do to record one change, a single HTTPS POST.
import { request } from 'node:https'

const url = new URL('v2/change', process.env.BASE_URL)
const body = JSON.stringify({ description: 'baseline', service: 'octo-org/octo-repo' })
const req = request(url, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-Service-ApiKey': process.env.API_KEY }
})
req.on('response', response => {
  let text = ''
  response.setEncoding('utf8')
  response.on('data', chunk => {
    text += chunk
  })
  response.on('end', () => console.log(JSON.parse(text).id))
})
req.end(body)

// The toolkit floor: the same change POST from a script that loads @actions/core's public entry,
// as every action built on the toolkit does, bundled by ncc like the action. The bench builds it.
import * as core from '@actions/core'
import { request } from 'node:https'

const url = new URL('v2/change', core.getInput('base-url'))
const body = JSON.stringify({ description: 'baseline', service: 'octo-org/octo-repo' })
const req = request(url, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', 'X-Service-ApiKey': core.getInput('api-key') }
})
req.on('response', response => {
  let text = ''
  response.setEncoding('utf8')
  response.on('data', chunk => {
    text += chunk
  })
  response.on('end', () => core.setOutput('change-id', JSON.parse(text).id))
})
req.end(body)

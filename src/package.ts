/** The action's name and version, as package.json gives them: the User-Agents name both. */
import pkg from '../package.json' with { type: 'json' }

export const ACTION_NAME = pkg.name
export const ACTION_VERSION = pkg.version

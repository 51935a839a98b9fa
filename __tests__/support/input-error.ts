import { InputError } from '../../src/errors.ts'

/** The InputError that `fn` throws; fails the test when it throws nothing or something else. */
export function inputError(fn: () => unknown): InputError {
  try {
    fn()
  } catch (error) {
    if (error instanceof InputError) return error
    throw error
  }
  throw new Error('expected an InputError, but nothing was thrown')
}

// Jest runs the TypeScript sources as ESM (see the test script's --experimental-vm-modules).
export default {
  extensionsToTreatAsEsm: ['.ts'],
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: {
    // Sources import siblings as ./x.ts; TypeScript rewrites that to ./x.js, which we map back.
    '^(\\.{1,2}/.*)\\.js$': '$1'
  },
  transform: {
    '^.+\\.ts$': '<rootDir>/__tests__/support/strip-types.mjs'
  },
  collectCoverageFrom: ['src/**/*.ts', '!src/index.ts'],
  coverageReporters: ['text-summary'],
  coverageThreshold: { global: { lines: 90 } },
  // The end-to-end suite runs a bundle built from the current sources, never a stale dist/.
  globalSetup: '<rootDir>/__tests__/support/bundle-setup.ts',
  globalTeardown: '<rootDir>/__tests__/support/bundle-teardown.ts',
  // A cold run starts the small files that mostly wait first: see the sequencer.
  testSequencer: '<rootDir>/__tests__/support/sequencer.mjs',
  // Three workers on a 2-core machine: the end-to-end tests mostly wait on child processes and
  // timers, so a third overlaps those waits (40 s instead of 47 s here).
  maxWorkers: 3,
  testTimeout: 30000
}

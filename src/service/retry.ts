/** The retry policy's tuning: exponential backoff with full jitter, and a cap on Retry-After. */
export const BACKOFF_BASE_MS = 500
export const BACKOFF_MAX_MS = 8_000
export const RETRY_AFTER_MAX_MS = 30_000

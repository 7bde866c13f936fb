/** Tries of a message meeting temporary provider failures before it is failed. */
export const MAX_DELIVERY_ATTEMPTS = 5;

/** Wait before trying again after a temporary provider failure (ms), by attempt (0-based). */
export function retryDelay(attempt: number): number {
  return Math.min(300_000, 2_000 * 3 ** attempt);
}

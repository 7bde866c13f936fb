/** Tries of a message meeting temporary provider failures before it is failed. */
export const MAX_DELIVERY_ATTEMPTS = 5;

/** Wait before trying again after a temporary provider failure (ms), by attempt (0-based). */
export function retryDelay(attempt: number): number {
  return Math.min(300_000, 2_000 * 3 ** attempt);
}

/**
 * The wait before the next try of a pass's pending messages: the schedule's, or longer when a
 * provider asked for longer (its Retry-After, at most an hour), plus up to a fifth more at random so
 * that the retries of a burst do not all come back in the same second.
 */
export function nextTryDelay(attempt: number, askedMs: number | undefined, random = Math.random): number {
  const base = Math.max(retryDelay(attempt), Math.min(askedMs ?? 0, 3_600_000));
  return Math.round(base * (1 + random() * 0.2));
}

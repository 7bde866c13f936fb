/** Deno KV refuses a queue delay over 30 days: a longer wait is chained (the job re-enqueues itself). */
export const MAX_QUEUE_DELAY_MS = 30 * 24 * 3_600_000;

/** The queue delay of a job due at `due`: never negative, never over the queue's maximum. */
export function queueDelay(due: number, now: number): number {
  return Math.min(MAX_QUEUE_DELAY_MS, Math.max(0, due - now));
}

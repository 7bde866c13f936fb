/**
 * Every retry schedule of the service, named for what it retries, each with the reason for its numbers.
 * One place, so that the engines cannot drift apart: the queue's schedule is given to Deno KV as it is
 * and to pg-boss as settings derived from the same numbers (see pgBossRetry).
 */

/** `first` grown by `factor` per step, `step` steps (0: `first`), never over `cap`. */
function grown(first: number, factor: number, cap: number, step: number): number {
  return Math.min(cap, first * factor ** step);
}

// --- The queue: a job whose handler threw -------------------------------------------------------

/**
 * The queue's waits before it runs again a job whose handler threw (ms): Deno KV's `backoffSchedule`.
 * A handler throws on what passes by itself (the database restarting, a lock timeout, a provider
 * outage in the middle of a pass): the first retry comes soon, the last after five minutes, so that a
 * job outlives an outage of about six minutes (381 s of waits) before the queue gives up on it and its
 * trigger shows failed. Deno KV takes at most 5 waits of at most an hour each.
 */
export const JOB_BACKOFF_MS = [1_000, 5_000, 15_000, 60_000, 300_000];

/** The retry settings of a pg-boss queue, in pg-boss's names (whole seconds, as pg-boss stores them). */
export interface PgBossRetry {
  /** Runs after the first, before the job is failed for good. */
  retryLimit: number;
  /** The first wait (s). */
  retryDelay: number;
  retryBackoff: true;
  /** No wait is longer (s). */
  retryDelayMax: number;
}

/**
 * pg-boss's settings for a queue schedule. pg-boss takes no list of waits: with `retryBackoff` its
 * wait after the k-th failure (k from 0) is `retryDelay · 2^k · (1 + a random fraction)`, at most
 * `retryDelayMax` (pg-boss 12, `failJobsBody` in plans.js). So its first wait is the schedule's first,
 * its longest the schedule's longest, and it retries until even its shortest waits add up to the whole
 * schedule: a job is given up on no sooner than on Deno KV (and at most about twice as late).
 */
export function pgBossRetry(scheduleMs: number[]): PgBossRetry {
  const retryDelay = Math.max(1, Math.ceil(scheduleMs[0] / 1_000));
  const retryDelayMax = Math.ceil(Math.max(...scheduleMs) / 1_000);
  const wholeS = scheduleMs.reduce((a, b) => a + b, 0) / 1_000;
  let retryLimit = 0;
  for (let shortestS = 0; shortestS < wholeS; retryLimit++) {
    shortestS += pgBossShortestWaitS(retryDelay, retryDelayMax, retryLimit);
  }
  return { retryLimit, retryDelay, retryBackoff: true, retryDelayMax };
}

/** pg-boss's shortest wait after the failure of run `retryCount` (0: the first run), in seconds. */
export function pgBossShortestWaitS(retryDelay: number, retryDelayMax: number, retryCount: number): number {
  return grown(retryDelay, 2, retryDelayMax, retryCount);
}

/** The queue's retries on pg-boss: 1 s doubling (with jitter) up to 300 s, 9 times (511–810 s in all). */
export const PG_BOSS_JOB_RETRY: PgBossRetry = pgBossRetry(JOB_BACKOFF_MS);

// --- A message a provider could not take just now -----------------------------------------------

/** Tries of a message meeting temporary provider failures before it is failed. */
export const MAX_DELIVERY_ATTEMPTS = 5;

/**
 * Wait before trying a message again after a temporary provider failure (ms), by attempt (0-based):
 * 2 s, 6 s, 18 s, 54 s. A rate limit or a brief outage is often over within seconds, so the first try
 * comes soon; tripling reaches a minute by the last, which spares a provider that is struggling.
 */
export function deliveryRetryDelay(attempt: number): number {
  return grown(2_000, 3, 300_000, attempt);
}

/**
 * The wait before the next try of a pass's pending messages: the schedule's, or longer when a
 * provider asked for longer (its Retry-After, at most an hour), plus up to a fifth more at random so
 * that the retries of a burst do not all come back in the same second.
 */
export function nextTryDelay(attempt: number, askedMs: number | undefined, random = Math.random): number {
  const base = Math.max(deliveryRetryDelay(attempt), Math.min(askedMs ?? 0, 3_600_000));
  return Math.round(base * (1 + random() * 0.2));
}

// --- Outbound webhooks --------------------------------------------------------------------------

/** Attempts per webhook delivery, the first included. */
export const WEBHOOK_MAX_ATTEMPTS = 13;
/** Wait after a delivery's first failed attempt; it doubles after each further failure … */
export const WEBHOOK_RETRY_BASE_MS = 30_000;
/** … up to this cap. With 0–25 % jitter added, 12 waits sum to 24.5–30.6 hours. */
export const WEBHOOK_RETRY_CAP_MS = 8 * 60 * 60 * 1000;

/**
 * The wait before the next attempt after `failedAttempt` (1-based) failed, or undefined when that was
 * the last. A customer's endpoint may be down for a day (a deploy gone wrong, a weekend), so the
 * schedule spans more than 24 hours; jitter only lengthens a wait, so it never ends sooner (at scale 1).
 * `scale` (WEBHOOK_RETRY_SCALE) shrinks the schedule for tests.
 */
export function webhookRetryDelayMs(
  failedAttempt: number,
  scale = 1,
  random: () => number = Math.random,
): number | undefined {
  if (failedAttempt >= WEBHOOK_MAX_ATTEMPTS) return undefined;
  return grown(WEBHOOK_RETRY_BASE_MS, 2, WEBHOOK_RETRY_CAP_MS, failedAttempt - 1) * (1 + 0.25 * random()) * scale;
}

/**
 * The first wait of a webhook delivery put off for want of a place at its endpoint
 * (WEBHOOK_SLOT_WAIT_MS); it doubles with each further deferral, up to WEBHOOK_DEFER_CAP_MS. A job
 * does not wait longer in the process: the KV queue runs at most 100 messages at once, and jobs queued
 * behind a slow endpoint would hold all of them, every other job of the service waiting.
 */
export const WEBHOOK_DEFER_BASE_MS = 1_000;
export const WEBHOOK_DEFER_CAP_MS = 30_000;

/** The wait before the `deferral`-th try (1-based) of a webhook delivery put off, with 0–25 % jitter. */
export function webhookDeferralDelayMs(deferral: number, random: () => number = Math.random): number {
  return grown(WEBHOOK_DEFER_BASE_MS, 2, WEBHOOK_DEFER_CAP_MS, deferral - 1) * (1 + 0.25 * random());
}

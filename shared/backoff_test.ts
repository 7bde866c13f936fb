import assert from "node:assert/strict";
import {
  deliveryRetryDelay,
  JOB_BACKOFF_MS,
  nextTryDelay,
  PG_BOSS_JOB_RETRY,
  pgBossRetry,
  pgBossShortestWaitS,
  WEBHOOK_DEFER_CAP_MS,
  WEBHOOK_MAX_ATTEMPTS,
  webhookDeferralDelayMs,
  webhookRetryDelayMs,
} from "./backoff.ts";

/** The seconds pg-boss waits in all over `retryLimit` retries, each at its shortest. */
function pgBossShortestSpanS(retry: { retryDelay: number; retryDelayMax: number }, retryLimit: number): number {
  return Array.from({ length: retryLimit }, (_, k) => pgBossShortestWaitS(retry.retryDelay, retry.retryDelayMax, k))
    .reduce((a, b) => a + b, 0);
}

Deno.test("JOB_BACKOFF_MS is a schedule Deno KV accepts: at most 5 waits, none over an hour", async () => {
  assert.ok(JOB_BACKOFF_MS.length <= 5);
  const kv = await Deno.openKv(":memory:");
  try {
    await kv.enqueue("accepted", { backoffSchedule: JOB_BACKOFF_MS });
  } finally {
    kv.close();
  }
});

Deno.test("pgBossRetry() starts at the schedule's first wait, stops growing at its last, and gives up no sooner", () => {
  const retry = pgBossRetry(JOB_BACKOFF_MS);
  assert.equal(retry.retryDelay * 1_000, JOB_BACKOFF_MS[0]);
  assert.equal(retry.retryDelayMax * 1_000, Math.max(...JOB_BACKOFF_MS));
  const wholeS = JOB_BACKOFF_MS.reduce((a, b) => a + b) / 1_000;
  assert.ok(pgBossShortestSpanS(retry, retry.retryLimit) >= wholeS);
  // The fewest retries that do: one fewer would give up before Deno KV does.
  assert.ok(pgBossShortestSpanS(retry, retry.retryLimit - 1) < wholeS);
  assert.deepEqual(PG_BOSS_JOB_RETRY, retry);
});

Deno.test("pgBossRetry() keeps pg-boss's whole seconds, at least one", () => {
  assert.deepEqual(pgBossRetry([200, 1_500]), { retryLimit: 2, retryDelay: 1, retryBackoff: true, retryDelayMax: 2 });
});

Deno.test("deliveryRetryDelay() waits 2, 6, 18 and 54 s, tripling up to 5 minutes", () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 9].map(deliveryRetryDelay), [
    2_000,
    6_000,
    18_000,
    54_000,
    162_000,
    300_000,
    300_000,
  ]);
});

Deno.test("nextTryDelay() takes the schedule's wait or a longer one asked for (up to an hour), plus up to a fifth", () => {
  assert.equal(nextTryDelay(0, undefined, () => 0), deliveryRetryDelay(0));
  assert.equal(nextTryDelay(1, 1_000, () => 0), deliveryRetryDelay(1));
  assert.equal(nextTryDelay(1, 60_000, () => 0), 60_000);
  assert.equal(nextTryDelay(1, 60_000, () => 0.999), Math.round(60_000 * 1.1998));
  assert.equal(nextTryDelay(0, 86_400_000, () => 0), 3_600_000);
});

Deno.test("webhookRetryDelayMs() doubles from 30 s to a cap of 8 h, and the 12 waits last more than 24 hours", () => {
  const none = () => 0;
  assert.equal(webhookRetryDelayMs(1, 1, none), 30_000);
  assert.equal(webhookRetryDelayMs(2, 1, none), 60_000);
  assert.equal(webhookRetryDelayMs(11, 1, none), 8 * 3600_000);
  assert.equal(webhookRetryDelayMs(WEBHOOK_MAX_ATTEMPTS, 1, none), undefined);
  const waits = (random: () => number) =>
    Array.from({ length: WEBHOOK_MAX_ATTEMPTS - 1 }, (_, i) => webhookRetryDelayMs(i + 1, 1, random)!)
      .reduce((a, b) => a + b);
  assert.ok(waits(none) >= 24 * 3600_000, `${waits(none) / 3600_000} h`);
  assert.ok(waits(() => 0.999) <= 31 * 3600_000);
  assert.equal(webhookRetryDelayMs(1, 0.001, () => 1), 37.5);
});

Deno.test("webhookDeferralDelayMs() waits 1 s for the first deferral, doubles, and stops at 30 s (jitter only lengthens)", () => {
  const none = () => 0;
  assert.deepEqual([1, 2, 3, 5, 6, 10].map((n) => webhookDeferralDelayMs(n, none)), [
    1_000,
    2_000,
    4_000,
    16_000,
    WEBHOOK_DEFER_CAP_MS,
    WEBHOOK_DEFER_CAP_MS,
  ]);
  assert.equal(webhookDeferralDelayMs(1, () => 1), 1_250);
});

import assert from "node:assert/strict";
import { nextTryDelay, retryDelay } from "./retry.ts";

Deno.test("nextTryDelay() takes the schedule's wait or a longer one asked for (up to an hour), plus up to a fifth", () => {
  assert.equal(nextTryDelay(0, undefined, () => 0), retryDelay(0));
  assert.equal(nextTryDelay(1, 1_000, () => 0), retryDelay(1));
  assert.equal(nextTryDelay(1, 60_000, () => 0), 60_000);
  assert.equal(nextTryDelay(1, 60_000, () => 0.999), Math.round(60_000 * 1.1998));
  assert.equal(nextTryDelay(0, 86_400_000, () => 0), 3_600_000);
});

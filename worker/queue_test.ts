import assert from "node:assert/strict";
import type { AcceptPressure } from "../shared/sending/pressure.ts";
import { dbTest, testDeps } from "../shared/testing.ts";
import { createWorkerContext } from "./context.ts";
import { runJob } from "./queue.ts";

/** True once `promise` has settled, looked at after `ms` milliseconds. */
async function settledAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, ms));
  return settled;
}

dbTest("a workflow-starts job waits while this process accepts a burst, and runs when it ends", async () => {
  const deps = await testDeps();
  const w = createWorkerContext(deps);
  let rate = 5_000;
  w.defer = { pressure: { rate: () => rate } as unknown as AcceptPressure, busyRate: 1_000, maxDelayMs: 600_000 };
  const job = { type: "workflow-starts" as const, id: crypto.randomUUID(), starts: [] };

  const during = runJob(w, job);
  assert.equal(await settledAfter(during, 300), false, "held while the burst lasts");
  // Run once the burst is over (a hold that never ended would time the test out).
  rate = 0;
  await during;
});

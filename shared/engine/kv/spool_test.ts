import assert from "node:assert/strict";
import { setLogLevel } from "../../log.ts";
import {
  drainSpool,
  SPOOL_SLOT_MS,
  SPOOL_SWEEP_AGE_MS,
  spoolKeys,
  type SpoolPage,
  spoolSlot,
  sweepSpool,
} from "./spool.ts";

/** A KV of its own whose queue messages are collected. */
async function queueHarness() {
  const kv = await Deno.openKv(":memory:");
  const messages: { type: string; id: string }[] = [];
  kv.listenQueue((m) => {
    messages.push(m as { type: string; id: string });
  });
  return { kv, messages };
}

async function until(check: () => boolean) {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

function page(id: string): SpoolPage {
  return { job: { type: "send-group", id }, undelivered: ["send_undelivered", "t", id] };
}

Deno.test("drainSpool() moves each page of its slot to the queue once, also when two drains run at once", async () => {
  const { kv, messages } = await queueHarness();
  const slot = spoolSlot(Date.now());
  for (const id of ["a", "b", "c"]) await kv.set(spoolKeys.page(slot, id), page(id));
  await kv.set(spoolKeys.page(slot + 1, "later"), page("later"));
  const moved = await Promise.all([drainSpool(kv, slot), drainSpool(kv, slot)]);
  assert.equal(moved[0] + moved[1], 3);
  await until(() => messages.length === 3);
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(messages.map((m) => m.id).sort(), ["a", "b", "c"]);
  assert.deepEqual((await Array.fromAsync(kv.list({ prefix: spoolKeys.all() }))).map((e) => e.key), [
    spoolKeys.page(slot + 1, "later"),
  ]);
  kv.close();
});

Deno.test("sweepSpool() moves only pages older than the sweep age", async () => {
  setLogLevel("silent");
  const { kv, messages } = await queueHarness();
  const now = Date.now();
  const old = spoolSlot(now - SPOOL_SWEEP_AGE_MS - SPOOL_SLOT_MS);
  const recent = spoolSlot(now - SPOOL_SWEEP_AGE_MS + 5 * SPOOL_SLOT_MS);
  await kv.set(spoolKeys.page(old, "orphan"), page("orphan"));
  await kv.set(spoolKeys.page(recent, "waiting"), page("waiting"));
  assert.equal(await sweepSpool(kv, now), 1);
  await until(() => messages.length === 1);
  assert.equal(messages[0].id, "orphan");
  assert.equal((await kv.get(spoolKeys.page(old, "orphan"))).value, null);
  assert.ok((await kv.get(spoolKeys.page(recent, "waiting"))).value, "a recent page waits for its drain job");
  kv.close();
});

Deno.test("drainSpool() with a runner runs each page's job and deletes it; a job that fails goes to the queue", async () => {
  const { kv, messages } = await queueHarness();
  const slot = spoolSlot(Date.now());
  for (const id of ["ok-1", "ok-2", "fails"]) await kv.set(spoolKeys.page(slot, id), page(id));
  const ran: string[] = [];
  const taken = await drainSpool(kv, slot, (job) => {
    ran.push(job.id);
    return job.id === "fails" ? Promise.reject(new Error("provider down")) : Promise.resolve();
  });
  assert.equal(taken, 3);
  assert.deepEqual(ran.sort(), ["fails", "ok-1", "ok-2"]);
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: spoolKeys.all() })), []);
  // Enqueued for the queue's retries (its first after JOB_BACKOFF_MS[0]).
  await until(() => messages.length === 1);
  assert.deepEqual(messages.map((m) => m.id), ["fails"]);
  kv.close();
});

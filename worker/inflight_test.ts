import assert from "node:assert/strict";
import { InflightJournal, inflightKeys } from "./inflight.ts";

/** A KV in memory whose queue messages are collected. */
async function memoryKv() {
  const kv = await Deno.openKv(":memory:");
  const delivered: unknown[] = [];
  const listening = kv.listenQueue((m) => {
    delivered.push(m);
  });
  return { kv, delivered, close: async () => (kv.close(), await listening) };
}

async function until(check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("Condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("InflightJournal: a job cut off by a crash is enqueued again once the dead process's heartbeat is stale", async () => {
  const { kv, delivered, close } = await memoryKv();
  let now = 1_000_000;
  const crashed = new InflightJournal(kv, { flushMs: 1, now: () => now });
  await kv.set(inflightKeys.heartbeat(crashed.processId), { at: now });
  const job = { type: "deliver-batch", id: "cut-off" };
  // The job never ends: the process dies while it runs.
  crashed.track(job, () => new Promise(() => {}));
  await crashed.flush();
  crashed.stop();

  const next = new InflightJournal(kv, { now: () => now });
  now += 2_000;
  assert.equal(await next.recover(), 0, "a heartbeat 2 s old is a live process: its jobs are left alone");
  now += 4_000;
  assert.equal(await next.recover(), 1);
  await until(() => delivered.length === 1);
  assert.deepEqual(delivered, [job]);
  assert.equal(await next.recover(), 0, "taken up once");
  const left = await Array.fromAsync(kv.list({ prefix: ["worker_inflight"] }));
  assert.deepEqual(left, []);
  assert.equal((await kv.get(inflightKeys.heartbeat(crashed.processId))).value, null);
  await close();
});

Deno.test("InflightJournal: finished jobs leave no entry, and a process never takes up its own jobs", async () => {
  const { kv, delivered, close } = await memoryKv();
  let now = 5_000_000;
  const journal = new InflightJournal(kv, { flushMs: 1, now: () => now });
  await kv.set(inflightKeys.heartbeat(journal.processId), { at: now });
  let release: (() => void) | undefined;
  let journaledAtStart = -1;
  const running = journal.track({ type: "dispatch", id: "a" }, async () => {
    journaledAtStart = (await Array.fromAsync(kv.list({ prefix: inflightKeys.jobsOf(journal.processId) }))).length;
    await new Promise<void>((r) => (release = r));
  });
  await until(() => release !== undefined);
  assert.equal(journaledAtStart, 1, "the handler starts once its entry is written");
  now += 60_000;
  assert.equal(await journal.recover(), 0, "its own heartbeat, however old, is not another process's");
  release!();
  await running;
  await journal.flush();
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["worker_inflight"] })), []);
  assert.deepEqual(delivered, []);
  journal.stop();
  await close();
});

Deno.test("InflightJournal: a job ending while its entry is being written leaves no entry; one ending unwritten writes none", async () => {
  const { kv, close } = await memoryKv();
  const journal = new InflightJournal(kv, { flushMs: 1 });
  const sets: number[] = [];
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const set = op.set.bind(op);
    op.set = (...args) => (sets.push(1), set(...args));
    return op;
  };
  // Ends in the same task as its start: the write that follows has nothing to set.
  const quick = journal.track({ type: "dispatch", id: "quick" }, () => Promise.resolve());
  // Ends while the write holding its entry is committing.
  const slow = journal.track({ type: "dispatch", id: "slow" }, () => new Promise((r) => setTimeout(r, 0)));
  await Promise.all([quick, slow]);
  await journal.flush();
  await journal.flush();
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["worker_inflight"] })), []);
  assert.ok(sets.length <= 2, `entries written: ${sets.length}`);
  journal.stop();
  await close();
});

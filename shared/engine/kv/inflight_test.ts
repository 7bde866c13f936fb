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

/** Counts the entries the journal's commits set and delete; `failNext` makes the next commit throw. */
function countingKv(kv: Deno.Kv) {
  const counts = { sets: 0, deletes: 0, failNext: false };
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const set = op.set.bind(op);
    const del = op.delete.bind(op);
    const commit = op.commit.bind(op);
    let sets = 0;
    let deletes = 0;
    op.set = (...args) => (sets++, set(...args));
    op.delete = (...args) => (deletes++, del(...args));
    op.commit = () => {
      if (counts.failNext) {
        counts.failNext = false;
        return Promise.reject(new Error("commit refused"));
      }
      counts.sets += sets;
      counts.deletes += deletes;
      return commit();
    };
    return op;
  };
  return counts;
}

Deno.test("InflightJournal: each job's entry is set once and deleted once, however starts and ends interleave", async () => {
  const { kv, close } = await memoryKv();
  const counts = countingKv(kv);
  const journal = new InflightJournal(kv, { flushMs: 1 });
  // Three jobs start in one task (one write); one ends at once, one while the other is still running.
  const jobs = [0, 1, 5].map((ms, i) =>
    journal.track({ type: "dispatch", id: `j${i}` }, () => new Promise((r) => setTimeout(r, ms)))
  );
  await Promise.all(jobs);
  await journal.flush();
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["worker_inflight"] })), []);
  assert.equal(counts.sets, 3);
  assert.equal(counts.deletes, 3);
  journal.stop();
  await close();
});

Deno.test("InflightJournal: a write KV refuses does not stop the job, and its entry is written by the next one", async () => {
  const { kv, close } = await memoryKv();
  const counts = countingKv(kv);
  const journal = new InflightJournal(kv, { flushMs: 60_000 });
  counts.failNext = true;
  let release: (() => void) | undefined;
  let started = false;
  const running = journal.track({ type: "dispatch", id: "a" }, async () => {
    started = true;
    await new Promise<void>((r) => (release = r));
  });
  await until(() => release !== undefined);
  assert.ok(started, "the job runs though its entry could not be written");
  assert.equal((await Array.fromAsync(kv.list({ prefix: ["worker_inflight"] }))).length, 0);
  await journal.flush();
  assert.equal(
    (await Array.fromAsync(kv.list({ prefix: ["worker_inflight"] }))).length,
    1,
    "written on the next write",
  );
  release!();
  await running;
  await journal.flush();
  assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["worker_inflight"] })), []);
  assert.equal(counts.sets, 1);
  journal.stop();
  await close();
});

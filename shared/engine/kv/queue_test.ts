import { KvCommitter } from "../../kv.ts";
import { strict as assert } from "node:assert";
import { type ContractJob, delay, queueContract, type QueueFixture, randomJob, runLog } from "../queue_contract.ts";
import { CheckedCommitter } from "./checked_commit.ts";
import { KvQueue } from "./queue.ts";
import { kvAtomically } from "./unit.ts";

/**
 * Each test gets a KV file of its own; every `open` is another process's view of it (its own
 * Deno.Kv on the same file), as the roles of one host share theirs.
 */
async function kvFixture(): Promise<QueueFixture> {
  const dir = await Deno.makeTempDir({ prefix: "kv-queue-" });
  const path = `${dir}/queue.sqlite3`;
  const first = await Deno.openKv(path);
  const opened = [first];
  const checked = new CheckedCommitter(first);
  fixtures.push({ opened, dir });
  return {
    atomically: (work) => kvAtomically(checked, work),
    pollMs: 1_000,
    open: async () => {
      // A unit's job, committed through `first`, is in the file every queue here listens to.
      const kv = await Deno.openKv(path);
      opened.push(kv);
      return new KvQueue(kv, new KvCommitter(kv));
    },
  };
}

const fixtures: { opened: Deno.Kv[]; dir: string }[] = [];

queueContract("Deno KV", kvFixture, (name, fn) =>
  Deno.test(name, async () => {
    try {
      await fn();
    } finally {
      for (const { opened, dir } of fixtures.splice(0)) {
        for (const kv of opened) kv.close();
        await Deno.remove(dir, { recursive: true });
      }
    }
  }));

/** A KV file of its own, opened here as `kv`, removed after `fn`. */
async function withFile(fn: (kv: Deno.Kv, path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kv-queue-" });
  const path = `${dir}/queue.sqlite3`;
  const kv = await Deno.openKv(path);
  try {
    await fn(kv, path);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Enqueues `job` to the KV file at `path` from another process (handles in one process wake each other). */
async function enqueueFromAnotherProcess(path: string, job: ContractJob): Promise<void> {
  const code = `const kv = await Deno.openKv(${JSON.stringify(path)}); await kv.enqueue(${
    JSON.stringify(job)
  }); kv.close();`;
  const { success } = await new Deno.Command(Deno.execPath(), { args: ["eval", "--unstable-kv", code] }).output();
  assert.ok(success, "the other process enqueued");
}

Deno.test("KvQueue on a local file: a job another process enqueues runs within seconds, and no tick reaches the handler", async () => {
  await withFile(async (kv, path) => {
    const consumer = new KvQueue(kv, new KvCommitter(kv), { localFile: true, tickMs: 200 });
    const runs = runLog();
    const seen: unknown[] = [];
    try {
      await consumer.listen((job) => (seen.push(job), runs.handler(job as ContractJob)));
      const job = randomJob();
      await enqueueFromAnotherProcess(path, job);
      const enqueued = Date.now();
      // Deno KV's own fallback poll would take up to 60 s.
      const started = await runs.until(job.id, 15_000);
      assert.ok(started - enqueued < 5_000, `started ${started - enqueued} ms after the enqueue`);
      assert.deepEqual(seen, [job], "ticks are the queue's own");
    } finally {
      await consumer.stop();
    }
  });
});

Deno.test("KvQueue on a local file: a running job is journaled, and its entry is gone once it ends", async () => {
  await withFile(async (a) => {
    const queue = new KvQueue<ContractJob>(a, new KvCommitter(a), { localFile: true });
    const journaled: number[] = [];
    let done = false;
    try {
      await queue.listen(async () => {
        journaled.push((await Array.fromAsync(a.list({ prefix: ["worker_inflight"] }))).length);
        done = true;
      });
      await queue.enqueue(randomJob());
      for (let i = 0; i < 500 && !done; i++) await delay(10);
      assert.deepEqual(journaled, [1], "the entry is written before the job starts");
      for (let i = 0; i < 200 && (await Array.fromAsync(a.list({ prefix: ["worker_inflight"] }))).length > 0; i++) {
        await delay(10);
      }
      assert.deepEqual(await Array.fromAsync(a.list({ prefix: ["worker_inflight"] })), []);
    } finally {
      await queue.stop();
    }
  });
});

import assert from "node:assert/strict";
import { KvCommitter } from "./kv.ts";

Deno.test("KvCommitter groups concurrent writes into few commits and resolves after them", async () => {
  const kv = await Deno.openKv(":memory:");
  const committer = new KvCommitter(kv);
  const writes = Array.from({ length: 300 }, (_, i) => committer.commit((op) => op.set(["k", i], i)));
  await Promise.all(writes);
  const entries = await Array.fromAsync(kv.list<number>({ prefix: ["k"] }));
  assert.equal(entries.length, 300);
  const stamps = new Set(entries.map((e) => e.versionstamp));
  assert.ok(stamps.size < 10, `expected few commits, got ${stamps.size}`);
  kv.close();
});

Deno.test("KvCommitter splits a group at the mutation limit", async () => {
  const kv = await Deno.openKv(":memory:");
  const committer = new KvCommitter(kv);
  const writes = Array.from({ length: 3 }, (_, i) =>
    committer.commit((op) => {
      for (let j = 0; j < 600; j++) op.set(["k", i, j], j);
    }, 600));
  await Promise.all(writes);
  const entries = await Array.fromAsync(kv.list({ prefix: ["k"] }));
  assert.equal(entries.length, 1800);
  kv.close();
});

/** Counts the atomic operations `kv` makes: the number of the current one. */
function countAtomics(kv: Deno.Kv): () => number {
  let count = 0;
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    count++;
    return atomic();
  };
  return () => count;
}

Deno.test("KvCommitter: a caller whose value KV refuses (over 64 KiB) rejects alone; the others of its group land", async () => {
  const kv = await Deno.openKv(":memory:");
  const atomics = countAtomics(kv);
  const committer = new KvCommitter(kv);
  const builtIn: number[][] = [[], [], [], [], []];
  const results = await Promise.allSettled(builtIn.map((ops, i) =>
    committer.commit((op) => {
      ops.push(atomics());
      op.set(["k", i], i === 2 ? "x".repeat(65 * 1024) : i);
    })
  ));
  // All five were first built into one commit.
  assert.deepEqual(builtIn.map((ops) => ops[0]), [1, 1, 1, 1, 1]);
  assert.deepEqual(results.map((r) => r.status), ["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
  assert.match(String((results[2] as PromiseRejectedResult).reason), /Value too large/);
  const entries = await Array.fromAsync(kv.list<number>({ prefix: ["k"] }));
  assert.deepEqual(entries.map((e) => e.value), [0, 1, 3, 4]);
  kv.close();
});

Deno.test("KvCommitter: a group over KV's 800 KiB a commit is committed caller by caller, and every write lands", async () => {
  const kv = await Deno.openKv(":memory:");
  const atomics = countAtomics(kv);
  const committer = new KvCommitter(kv);
  const firstBuilt: number[] = [];
  // 15 values of 60 KiB each: every caller is within KV's limits, the group of them (900 KiB) is not.
  await Promise.all(Array.from({ length: 15 }, (_, i) =>
    committer.commit((op) => {
      firstBuilt[i] ??= atomics();
      op.set(["k", i], String(i).padEnd(60 * 1024, "x"));
    })));
  assert.deepEqual(new Set(firstBuilt), new Set([1]));
  const entries = await Array.fromAsync(kv.list<string>({ prefix: ["k"] }));
  assert.equal(entries.length, 15);
  for (const [i, e] of entries.entries()) assert.ok(e.value.startsWith(String(i)));
  kv.close();
});

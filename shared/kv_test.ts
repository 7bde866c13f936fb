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

import assert from "node:assert/strict";
import { CheckedCommitter } from "./checked_commit.ts";
import { spyKv } from "./spy_kv.ts";

async function memoryKv() {
  const kv = await Deno.openKv(":memory:");
  return { kv, spy: spyKv(kv) };
}

Deno.test("CheckedCommitter shares one commit among concurrent operations on different keys", async () => {
  const { kv, spy } = await memoryKv();
  const committer = new CheckedCommitter(spy.kv);
  const results = await Promise.all(
    Array.from(
      { length: 10 },
      (_, i) => committer.commit([["k", i]], (op) => op.check({ key: ["k", i], versionstamp: null }).set(["k", i], i)),
    ),
  );
  assert.deepEqual(results, Array(10).fill(true));
  assert.equal(spy.counts.commits, 1);
  assert.equal((await kv.get(["k", 9])).value, 9);
  kv.close();
});

Deno.test("CheckedCommitter fails only the operation whose check no longer holds", async () => {
  const { kv, spy } = await memoryKv();
  await kv.set(["taken"], "first");
  const committer = new CheckedCommitter(spy.kv);
  const results = await Promise.all([
    committer.commit([["a"]], (op) => op.check({ key: ["a"], versionstamp: null }).set(["a"], 1)),
    committer.commit([["taken"]], (op) => op.check({ key: ["taken"], versionstamp: null }).set(["taken"], "second")),
    committer.commit([["b"]], (op) => op.check({ key: ["b"], versionstamp: null }).set(["b"], 2)),
  ]);
  assert.deepEqual(results, [true, false, true]);
  assert.equal((await kv.get(["taken"])).value, "first");
  assert.equal((await kv.get(["b"])).value, 2);
  kv.close();
});

Deno.test("CheckedCommitter never puts two operations on one key in the same commit", async () => {
  const { kv, spy } = await memoryKv();
  const entry = await kv.get<number>(["counter"]);
  const committer = new CheckedCommitter(spy.kv);
  const add = (n: number) => committer.commit([["counter"]], (op) => op.check(entry).set(["counter"], n));
  assert.deepEqual(await Promise.all([add(1), add(2)]), [true, false]);
  assert.equal((await kv.get(["counter"])).value, 1);
  assert.equal(spy.counts.commits, 2);
  kv.close();
});

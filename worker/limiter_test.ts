import assert from "node:assert/strict";
import { KeyedLimiter, Limiter } from "./limiter.ts";

/** A task that counts how many of its kind run at once, and ends when `release` resolves. */
function counted(counter: { now: number; most: number }, release: Promise<void>) {
  return async () => {
    counter.most = Math.max(counter.most, ++counter.now);
    await release;
    counter.now--;
  };
}

Deno.test("Limiter runs at most its size at once, the waiting ones in the order they came", async () => {
  const limiter = new Limiter(2);
  const counter = { now: 0, most: 0 };
  const order: number[] = [];
  let open!: () => void;
  const release = new Promise<void>((resolve) => (open = resolve));
  const runs = Array.from({ length: 5 }, (_, i) =>
    limiter.run(async () => {
      order.push(i);
      await counted(counter, release)();
    }));
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(order, [0, 1]);
  open();
  await Promise.all(runs);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  assert.equal(counter.most, 2);
});

Deno.test("KeyedLimiter bounds each key on its own and forgets a key once it is idle", async () => {
  const limiter = new KeyedLimiter(3);
  const [a, b] = [{ now: 0, most: 0 }, { now: 0, most: 0 }];
  let open!: () => void;
  const release = new Promise<void>((resolve) => (open = resolve));
  const runs = [
    ...Array.from({ length: 10 }, () => limiter.run("a", counted(a, release))),
    ...Array.from({ length: 2 }, () => limiter.run("b", counted(b, release))),
  ];
  await new Promise((r) => setTimeout(r, 0));
  // Key b's tasks run although key a has seven waiting.
  assert.deepEqual([a.now, b.now], [3, 2]);
  assert.equal(limiter.keys, 2);
  open();
  await Promise.all(runs);
  assert.deepEqual([a.most, b.most], [3, 2]);
  assert.equal(limiter.keys, 0);
});

Deno.test("KeyedLimiter passes on a task's result and its error, and frees the place after an error", async () => {
  const limiter = new KeyedLimiter(1);
  assert.equal(await limiter.run("k", () => Promise.resolve(42)), 42);
  await assert.rejects(limiter.run("k", () => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(await limiter.run("k", () => Promise.resolve("after")), "after");
  assert.equal(limiter.keys, 0);
});

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

/** A promise and the function that resolves it. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("Limiter runs at most its size at once, the waiting ones in the order they came", async () => {
  const limiter = new Limiter(2);
  const counter = { now: 0, most: 0 };
  const order: number[] = [];
  const { open, opened } = gate();
  const runs = Array.from({ length: 5 }, (_, i) =>
    limiter.run(async () => {
      order.push(i);
      await counted(counter, opened)();
    }));
  await tick();
  assert.deepEqual(order, [0, 1]);
  open();
  await Promise.all(runs);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  assert.equal(counter.most, 2);
});

Deno.test("Limiter.acquire() gives up after maxWaitMs, and a place freed later goes to the next still waiting", async () => {
  const limiter = new Limiter(1);
  assert.equal(await limiter.acquire(), true);
  assert.equal(await limiter.acquire(0), false);
  const impatient = limiter.acquire(10);
  const patient = limiter.acquire();
  assert.equal(await impatient, false);
  limiter.release();
  assert.equal(await patient, true);
  limiter.release();
  // Every place is free again: as many as the size, at once.
  assert.equal(await limiter.acquire(0), true);
});

Deno.test("KeyedLimiter bounds each key on its own and forgets a key once it is idle", async () => {
  const limiter = new KeyedLimiter(3);
  const [a, b] = [{ now: 0, most: 0 }, { now: 0, most: 0 }];
  const { open, opened } = gate();
  const runs = [
    ...Array.from({ length: 10 }, () => limiter.tryRun("a", Infinity, counted(a, opened))),
    ...Array.from({ length: 2 }, () => limiter.tryRun("b", Infinity, counted(b, opened))),
  ];
  await tick();
  // Key b's tasks run although key a has seven waiting.
  assert.deepEqual([a.now, b.now], [3, 2]);
  assert.equal(limiter.keys, 2);
  open();
  assert.deepEqual(await Promise.all(runs), Array(12).fill(true));
  assert.deepEqual([a.most, b.most], [3, 2]);
  assert.equal(limiter.keys, 0);
});

Deno.test("KeyedLimiter.tryRun() answers false without running the task when no place frees up in time", async () => {
  const limiter = new KeyedLimiter(1);
  const { open, opened } = gate();
  const holder = limiter.tryRun("k", 0, () => opened);
  let ran = false;
  assert.equal(await limiter.tryRun("k", 20, () => Promise.resolve(void (ran = true))), false);
  assert.equal(ran, false);
  open();
  assert.equal(await holder, true);
  await assert.rejects(limiter.tryRun("k", 0, () => Promise.reject(new Error("boom"))), /boom/);
  // The failed task gave its place back.
  assert.equal(await limiter.tryRun("k", 0, () => Promise.resolve()), true);
  assert.equal(limiter.keys, 0);
});

import assert from "node:assert/strict";
import { Batcher } from "./batcher.ts";

Deno.test("Batcher runs the values of concurrent callers in few groups, within the weight and count limits", async () => {
  const groups: number[][] = [];
  const batcher = new Batcher<number>(async (values) => {
    groups.push(values);
    await new Promise((r) => setTimeout(r, 5));
  }, { maxWeight: 10, maxCount: 4 });
  await Promise.all(Array.from({ length: 12 }, (_, i) => batcher.add(i, i === 0 ? 25 : 2)));
  assert.deepEqual(groups.flat(), Array.from({ length: 12 }, (_, i) => i));
  // A value heavier than the limit runs alone; then at most 4 values (weight 8) a group.
  assert.deepEqual(groups.map((g) => g.length), [1, 4, 4, 3]);
});

Deno.test("Batcher rejects every caller of a failed group and carries on with the next", async () => {
  let calls = 0;
  const batcher = new Batcher<string>((values) => {
    calls++;
    return calls === 1 ? Promise.reject(new Error(`failed ${values.join(",")}`)) : Promise.resolve();
  }, { maxWeight: 2 });
  const results = await Promise.allSettled(["a", "b", "c"].map((v) => batcher.add(v)));
  assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected", "fulfilled"]);
  assert.equal((results[0] as PromiseRejectedResult).reason.message, "failed a,b");
});

Deno.test("Batcher awaits hold() with the oldest arrival before each group; values added meanwhile join it", async () => {
  const groups: string[][] = [];
  const holds: number[] = [];
  let release!: () => void;
  const batcher = new Batcher<string>((values) => {
    groups.push(values);
    return Promise.resolve();
  }, {
    maxWeight: 100,
    hold: (arrived) => {
      holds.push(arrived);
      return holds.length === 1 ? new Promise<void>((r) => release = r) : Promise.resolve();
    },
  });
  const before = Date.now();
  const first = batcher.add("early");
  await new Promise((r) => setTimeout(r, 5));
  const second = batcher.add("late");
  release();
  await Promise.all([first, second]);
  assert.deepEqual(groups, [["early", "late"]]);
  assert.ok(holds[0] >= before && holds[0] <= Date.now());
});

/** A runner that fails any run holding "bad", with an error naming the values of that run. */
function failingOnBad(runs: string[][]) {
  return (values: string[]) => {
    runs.push(values);
    return values.includes("bad") ? Promise.reject(new Error(`failed ${values.join(",")}`)) : Promise.resolve();
  };
}

Deno.test("Batcher with retryAlone runs each value of a failed group alone: only the bad one rejects, with its own error", async () => {
  const runs: string[][] = [];
  const batcher = new Batcher<string>(failingOnBad(runs), { maxWeight: 10, retryAlone: true });
  const results = await Promise.allSettled(["a", "bad", "c"].map((v) => batcher.add(v)));
  assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
  assert.equal((results[1] as PromiseRejectedResult).reason.message, "failed bad");
  // One group run, then each value alone, in arrival order.
  assert.deepEqual(runs, [["a", "bad", "c"], ["a"], ["bad"], ["c"]]);
  // The batcher carries on with the next group.
  await batcher.add("d");
  assert.deepEqual(runs.at(-1), ["d"]);
});

Deno.test("Batcher with retryAlone does not run a failed group of one value again", async () => {
  const runs: string[][] = [];
  const batcher = new Batcher<string>(failingOnBad(runs), { maxWeight: 10, retryAlone: true });
  await assert.rejects(batcher.add("bad"), { message: "failed bad" });
  assert.deepEqual(runs, [["bad"]]);
});

Deno.test("Batcher without retryAlone rejects every caller of the failed group with the group's error", async () => {
  const runs: string[][] = [];
  const batcher = new Batcher<string>(failingOnBad(runs), { maxWeight: 10 });
  const results = await Promise.allSettled(["a", "bad", "c"].map((v) => batcher.add(v)));
  assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected", "rejected"]);
  for (const r of results) assert.equal((r as PromiseRejectedResult).reason.message, "failed a,bad,c");
  assert.deepEqual(runs, [["a", "bad", "c"]]);
});

Deno.test("Batcher with concurrency 2 runs two groups at once, never more, each with the values waiting", async () => {
  const groups: number[][] = [];
  let running = 0;
  let most = 0;
  const batcher = new Batcher<number>(async (values) => {
    groups.push(values);
    most = Math.max(most, ++running);
    await new Promise((r) => setTimeout(r, 10));
    running--;
  }, { maxWeight: 3, concurrency: 2 });
  await Promise.all(Array.from({ length: 12 }, (_, i) => batcher.add(i)));
  assert.equal(most, 2);
  assert.deepEqual(groups.flat(), Array.from({ length: 12 }, (_, i) => i));
  assert.deepEqual(groups.map((g) => g.length), [3, 3, 3, 3]);
  // Once idle, the next value starts a group at once.
  await batcher.add(12);
  assert.deepEqual(groups.at(-1), [12]);
});

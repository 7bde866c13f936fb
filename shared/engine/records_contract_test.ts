import assert from "node:assert/strict";
import { KvCommitter } from "../kv.ts";
import { dbTest, testRuntime } from "../testing.ts";
import { kvHotState } from "./kv/hot_state.ts";
import { postgresHotState } from "./postgres/hot_state.ts";
import { engineTest, randomScope } from "./testing.ts";

const TTL = 60_000;

engineTest("ExpiringRecords.put() creates a record only where none is, and get() reads it", async ({ hot }) => {
  const scope = randomScope();
  const records = hot.otpSessions;
  assert.equal(await records.get(scope, "s1"), null);
  assert.equal(await records.put(scope, "s1", { n: 1 }, { expected: null, ttlMs: TTL, activeUntil: null }), true);
  const read = await records.get<{ n: number }>(scope, "s1");
  assert.deepEqual(read?.value, { n: 1 });
  assert.equal(typeof read?.version, "string");
  assert.equal(await records.put(scope, "s1", { n: 2 }, { expected: null, ttlMs: TTL, activeUntil: null }), false);
  assert.deepEqual((await records.get(scope, "s1"))?.value, { n: 1 });
  assert.equal(await records.get(randomScope(), "s1"), null, "scopes are apart");
});

engineTest("ExpiringRecords.put() lands on the version read, and not on a stale one", async ({ hot }) => {
  const scope = randomScope();
  const records = hot.otpSessions;
  await records.put(scope, "s", { n: 1 }, { expected: null, ttlMs: TTL, activeUntil: null });
  const first = (await records.get(scope, "s"))!;
  assert.equal(
    await records.put(scope, "s", { n: 2 }, { expected: first.version, ttlMs: TTL, activeUntil: null }),
    true,
  );
  const second = (await records.get(scope, "s"))!;
  assert.notEqual(second.version, first.version);
  assert.equal(
    await records.put(scope, "s", { n: 3 }, { expected: first.version, ttlMs: TTL, activeUntil: null }),
    false,
  );
  assert.deepEqual((await records.get(scope, "s"))?.value, { n: 2 });
});

engineTest(
  "ExpiringRecords.put(): of 10 racers from one version, also across processes, exactly one wins",
  async ({ hot, another }) => {
    const scope = randomScope();
    const second = another();
    await hot.otpSessions.put(scope, "s", { by: -1 }, { expected: null, ttlMs: TTL, activeUntil: null });
    const read = (await hot.otpSessions.get(scope, "s"))!;
    const wins = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? second : hot).otpSessions.put(scope, "s", { by: i }, {
          expected: read.version,
          ttlMs: TTL,
          activeUntil: null,
        })),
    );
    assert.equal(wins.filter(Boolean).length, 1);
    const winner = wins.indexOf(true);
    assert.deepEqual((await hot.otpSessions.get(scope, "s"))?.value, { by: winner });
  },
);

engineTest("ExpiringRecords.countActive() counts records active at a time, with the soonest end", async ({ hot }) => {
  const scope = randomScope();
  const records = hot.otpSessions;
  const now = Date.now();
  const put = (id: string, activeUntil: number | null) =>
    records.put(scope, id, { id }, { expected: null, ttlMs: TTL, activeUntil });
  assert.deepEqual(await records.countActive(scope, now), { count: 0, soonestEnd: null });
  await put("a", now + 30_000);
  await put("b", now + 10_000);
  await put("c", null);
  await records.put(randomScope(), "d", {}, { expected: null, ttlMs: TTL, activeUntil: now + 5_000 });
  assert.deepEqual(await records.countActive(scope, now), { count: 2, soonestEnd: now + 10_000 });
  assert.deepEqual(await records.countActive(scope, now + 10_000), { count: 1, soonestEnd: now + 30_000 });
  // A record that stops being active (verified, locked) leaves the count.
  const a = (await records.get(scope, "a"))!;
  assert.equal(
    await records.put(scope, "a", { id: "a" }, { expected: a.version, ttlMs: TTL, activeUntil: null }),
    true,
  );
  assert.deepEqual(await records.countActive(scope, now), { count: 1, soonestEnd: now + 10_000 });
});

engineTest(
  "HotState.atomically(): the records of a unit land together, and a lost check writes none",
  async ({ hot }) => {
    const scope = randomScope();
    const records = hot.otpSessions;
    const fresh = { expected: null, ttlMs: TTL, activeUntil: null };
    assert.equal(
      await hot.atomically(async (unit) => {
        await records.put(scope, "a", { n: 1 }, fresh, unit);
        await records.put(scope, "b", { n: 1 }, fresh, unit);
      }),
      true,
    );
    assert.deepEqual((await records.get(scope, "a"))?.value, { n: 1 });
    assert.deepEqual((await records.get(scope, "b"))?.value, { n: 1 });
    const a = (await records.get(scope, "a"))!;
    // "b" already exists, so its put loses: "a" must stay as it was.
    assert.equal(
      await hot.atomically(async (unit) => {
        await records.put(scope, "a", { n: 2 }, { ...fresh, expected: a.version }, unit);
        await records.put(scope, "b", { n: 2 }, fresh, unit);
      }),
      false,
    );
    assert.deepEqual((await records.get(scope, "a"))?.value, { n: 1 });
    assert.equal((await records.get(scope, "a"))?.version, a.version);
    assert.deepEqual((await records.get(scope, "b"))?.value, { n: 1 });
  },
);

engineTest(
  "HotState.atomically(): work that throws writes nothing, and its error reaches the caller",
  async ({ hot }) => {
    const scope = randomScope();
    await assert.rejects(
      hot.atomically(async (unit) => {
        await hot.otpSessions.put(scope, "a", { n: 1 }, { expected: null, ttlMs: TTL, activeUntil: null }, unit);
        throw new Error("the change failed");
      }),
      /the change failed/,
    );
    assert.equal(await hot.otpSessions.get(scope, "a"), null);
  },
);

dbTest("HotState.atomically(): a record of one engine cannot be written in a unit of the other", async () => {
  const kv = await Deno.openKv(":memory:");
  const kvHot = kvHotState(kv, new KvCommitter(kv));
  const pgHot = postgresHotState((await testRuntime()).deps.sql);
  const fresh = { expected: null, ttlMs: TTL, activeUntil: null };
  try {
    await assert.rejects(
      kvHot.atomically((unit) => pgHot.otpSessions.put(randomScope(), "a", 1, fresh, unit).then(() => {})),
      /Cannot write to Postgres in a unit of work on kv/,
    );
    await assert.rejects(
      pgHot.atomically((unit) => kvHot.otpSessions.put(randomScope(), "a", 1, fresh, unit).then(() => {})),
      /Cannot write to Deno KV in a unit of work on postgres/,
    );
  } finally {
    await kvHot.close();
    await pgHot.close();
    kv.close();
  }
});

engineTest("ExpiringRecords.put() keeps a null value (an emptied record) as null", async ({ hot }) => {
  const scope = randomScope();
  const records = hot.otpSessions;
  await records.put(scope, "s", { n: 1 }, { expected: null, ttlMs: TTL, activeUntil: null });
  const read = (await records.get(scope, "s"))!;
  assert.equal(await records.put(scope, "s", null, { expected: read.version, ttlMs: TTL, activeUntil: null }), true);
  const emptied = await records.get(scope, "s");
  assert.equal(emptied?.value, null);
  assert.notEqual(emptied?.version, read.version);
});

import assert from "node:assert/strict";
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

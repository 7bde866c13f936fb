import assert from "node:assert/strict";
import { dbTest, testRuntime } from "../testing.ts";
import { postgresHotState } from "./postgres/hot_state.ts";
import { engineTest, randomScope } from "./testing.ts";

const HOUR_MS = 3_600_000;

engineTest("WindowCounters.hit() allows the limit in a window, then refuses until the next window", async ({ hot }) => {
  const subject = randomScope();
  const start = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
  const hit = (at: number, who = subject) => hot.counters.hit("api", who, 3, HOUR_MS, at);
  assert.deepEqual(await hit(start + 10), { allowed: true, limit: 3, remaining: 2, resetAt: start + HOUR_MS });
  assert.equal((await hit(start + 20)).remaining, 1);
  assert.equal((await hit(start + 30)).remaining, 0);
  assert.deepEqual(await hit(start + 40), { allowed: false, limit: 3, remaining: 0, resetAt: start + HOUR_MS });
  assert.equal((await hit(start + 40, randomScope())).allowed, true, "each subject is counted apart");
  assert.equal((await hot.counters.hit("trigger", subject, 3, HOUR_MS, start)).allowed, true, "and each name");
  assert.deepEqual(await hit(start + HOUR_MS), { allowed: true, limit: 3, remaining: 2, resetAt: start + 2 * HOUR_MS });
});

engineTest("WindowCounters.hit() under 200 concurrent hits allows exactly the limit", async ({ hot }) => {
  const subject = randomScope();
  const now = Date.now();
  const hits = await Promise.all(
    Array.from({ length: 200 }, () => hot.counters.hit("api", subject, 150, HOUR_MS, now)),
  );
  assert.equal(hits.filter((h) => h.allowed).length, 150);
  const remaining = hits.filter((h) => h.allowed).map((h) => h.remaining).sort((a, b) => a - b);
  assert.deepEqual(remaining, Array.from({ length: 150 }, (_, i) => i), "each allowed hit saw its own count");
});

engineTest("WindowCounters.hit() adds up the flushed hits of several processes", async ({ hot, another }) => {
  // A limit large enough to be counted in memory and flushed (a small one is exact: see below).
  const limit = 5_000;
  const subject = randomScope();
  const now = Date.now();
  const second = another();
  for (let i = 0; i < 4; i++) await hot.counters.hit("api", subject, limit, HOUR_MS, now);
  for (let i = 0; i < 3; i++) await second.counters.hit("api", subject, limit, HOUR_MS, now);
  await Promise.all([hot.counters.flush(), second.counters.flush()]);
  assert.equal((await another().counters.hit("api", subject, limit, HOUR_MS, now)).remaining, limit - 8);
  // A process that wrote sees the others' flushed hits (7 and its own one more) once it flushes again.
  await hot.counters.hit("api", subject, limit, HOUR_MS, now);
  await hot.counters.flush();
  assert.equal((await hot.counters.hit("api", subject, limit, HOUR_MS, now)).remaining, limit - 9);
});

engineTest(
  "WindowCounters.hit(): a hit timed just before a window's end is kept, though a later one is handled first",
  async ({ hot, another }) => {
    const [late, early] = [randomScope(), randomScope()];
    const end = (Math.floor(Date.now() / HOUR_MS) + 1) * HOUR_MS;
    // Requests timed either side of the boundary, handled together: the ended window is still being read.
    await Promise.all([
      hot.counters.hit("api", late, 10, HOUR_MS, end - 1),
      hot.counters.hit("api", early, 10, HOUR_MS, end + 1),
    ]);
    await hot.counters.flush();
    assert.equal((await another().counters.hit("api", late, 10, HOUR_MS, end - 1)).remaining, 8);
  },
);

engineTest(
  "WindowCounters.hitSliding(): never more than the limit in any window, also across a boundary",
  async ({ hot }) => {
    const W = 300_000;
    const t0 = Math.floor(Date.now() / W) * W + W - 2_000;
    const subject = randomScope();
    const hit = (at: number, who = subject) => hot.counters.hitSliding("otp", who, 3, W, at);
    assert.equal((await hit(t0)).allowed, true);
    assert.equal((await hit(t0 + 1_000)).allowed, true);
    // Where a fixed 5-minute window would start again.
    assert.deepEqual(await hit(t0 + 2_000), { allowed: true, limit: 3, remaining: 0, resetAt: t0 + W });
    // Allowed again once the oldest hit leaves the window, not before.
    assert.deepEqual(await hit(t0 + 3_000), { allowed: false, limit: 3, remaining: 0, resetAt: t0 + W });
    assert.equal((await hit(t0 + W - 1)).allowed, false);
    assert.equal((await hit(t0 + W)).allowed, true);
    assert.equal((await hit(t0 + W + 1)).allowed, false, "the second hit is still in the window");
    assert.equal((await hit(t0 + 3_000, randomScope())).allowed, true, "each subject is counted apart");
  },
);

engineTest("WindowCounters.hitSliding() under 50 concurrent hits allows exactly the limit", async ({ hot }) => {
  const subject = randomScope();
  const now = Date.now();
  const hits = await Promise.all(
    Array.from({ length: 50 }, (_, i) => hot.counters.hitSliding("otp", subject, 20, 60_000, now + i)),
  );
  assert.equal(hits.filter((h) => h.allowed).length, 20);
});

engineTest("WindowCounters.hitSliding() counts another process's flushed hits", async ({ hot, another }) => {
  const subject = randomScope();
  const t0 = Date.now();
  assert.equal((await hot.counters.hitSliding("otp", subject, 3, 60_000, t0)).allowed, true);
  const second = another();
  assert.equal((await second.counters.hitSliding("otp", subject, 3, 60_000, t0 + 1)).allowed, true);
  await hot.counters.flush();
  await second.counters.flush();
  const third = another();
  assert.equal((await third.counters.hitSliding("otp", subject, 3, 60_000, t0 + 2)).allowed, true);
  assert.equal((await third.counters.hitSliding("otp", subject, 3, 60_000, t0 + 3)).allowed, false);
});

engineTest("WindowCounters.hitSliding(): concurrent first hits on new subjects are each counted and kept", async ({
  hot,
  another,
}) => {
  const subjects = [randomScope(), randomScope(), randomScope()];
  const t0 = Date.now();
  const hit = (who: string, at: number) => hot.counters.hitSliding("otp", who, 3, 60_000, at);
  assert.deepEqual((await Promise.all(subjects.map((who) => hit(who, t0)))).map((h) => h.remaining), [2, 2, 2]);
  assert.equal((await hit(subjects[0], t0 + 1)).remaining, 1, "the second hit sees the first");
  await hot.counters.flush();
  const later = another();
  const seen = await Promise.all(subjects.map((who) => later.counters.hitSliding("otp", who, 3, 60_000, t0 + 2)));
  assert.deepEqual(seen.map((h) => h.remaining), [0, 1, 1], "another process reads every hit");
});

dbTest("PostgresCounters: a small limit holds exactly across replicas hitting it at once", async () => {
  const { sql } = (await testRuntime()).deps;
  const replicas = [postgresHotState(sql), postgresHotState(sql), postgresHotState(sql)];
  const subject = randomScope();
  try {
    const now = Date.now();
    const hits = await Promise.all(
      Array.from({ length: 180 }, (_, i) => replicas[i % 3].counters.hit("api", subject, 100, 3_600_000, now)),
    );
    assert.equal(hits.filter((h) => h.allowed).length, 100);
    assert.equal(Math.min(...hits.map((h) => h.remaining)), 0);
  } finally {
    for (const hot of replicas) await hot.close();
  }
});

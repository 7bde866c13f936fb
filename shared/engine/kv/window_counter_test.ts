import assert from "node:assert/strict";
import { kvKeys } from "../../kv.ts";
import { setLogLevel } from "../../log.ts";
import { WindowCounter } from "./window_counter.ts";

const HOUR_MS = 3_600_000;

/**
 * A real in-memory KV whose next `failures` calls of `method` (`get`, or `commit` of an atomic
 * operation) throw what SQLite throws when another process holds the file.
 */
function failingKv(kv: Deno.Kv, method: "get" | "commit", failures: number): Deno.Kv {
  let left = failures;
  const locked = () => Promise.reject(new TypeError("database is locked"));
  const bound = <T extends object>(target: T, prop: string | symbol) => {
    const value = Reflect.get(target, prop);
    return typeof value === "function" ? value.bind(target) : value;
  };
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "get" && method === "get") {
        return (...args: Parameters<Deno.Kv["get"]>) => left-- > 0 ? locked() : target.get(...args);
      }
      if (prop === "atomic" && method === "commit") {
        return () => {
          const op = target.atomic();
          return new Proxy(op, {
            get: (o, p) => (p === "commit" ? () => (left-- > 0 ? locked() : o.commit()) : bound(o, p)),
          });
        };
      }
      return bound(target, prop);
    },
  });
}

async function until(check: () => Promise<boolean>, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

Deno.test("WindowCounter: hits whose write KV refuses are written by a later flush, and nothing crashes", async () => {
  setLogLevel("silent");
  const kv = await Deno.openKv(":memory:");
  const counter = new WindowCounter(failingKv(kv, "commit", 2), { flushMs: 10 });
  try {
    const now = Date.now();
    for (let i = 0; i < 3; i++) assert.equal((await counter.hit("api", "key-1", 10, HOUR_MS, now)).allowed, true);
    const key = kvKeys.rateLimit("key-1", Math.floor(now / HOUR_MS));
    // Two refused commits (each an unhandled rejection before), then the retry lands all three hits.
    await until(async () => (await kv.get<number>(key)).value === 3);
    assert.equal((await counter.hit("api", "key-1", 10, HOUR_MS, now)).remaining, 6);
  } finally {
    await counter.close();
    kv.close();
  }
});

Deno.test("WindowCounter: a window whose first read fails is read again by the next hit", async () => {
  const kv = await Deno.openKv(":memory:");
  const now = Date.now();
  const key = kvKeys.rateLimit("key-2", Math.floor(now / HOUR_MS));
  await kv.set(key, 4);
  const counter = new WindowCounter(failingKv(kv, "get", 1), { flushMs: 10 });
  try {
    await assert.rejects(counter.hit("api", "key-2", 10, HOUR_MS, now), /database is locked/);
    // The stored 4 is read this time: this hit is the fifth.
    assert.equal((await counter.hit("api", "key-2", 10, HOUR_MS, now)).remaining, 5);
  } finally {
    await counter.close();
    kv.close();
  }
});

Deno.test("WindowCounter.hitSliding(): hits are kept in KV and merged with another process's", async () => {
  const kv = await Deno.openKv(":memory:");
  const W = 60_000;
  const t0 = Date.now();
  const a = new WindowCounter(kv);
  const b = new WindowCounter(kv);
  try {
    assert.equal((await a.hitSliding("t", "r", 3, W, t0)).allowed, true);
    assert.equal((await b.hitSliding("t", "r", 3, W, t0 + 1)).allowed, true);
    await a.flush();
    await b.flush();
    assert.deepEqual((await kv.get(kvKeys.slidingLimiter("t", "r"))).value, [t0, t0 + 1]);
    // A third process reads both hits: one more is allowed, then none.
    const c = new WindowCounter(kv);
    assert.equal((await c.hitSliding("t", "r", 3, W, t0 + 2)).allowed, true);
    assert.equal((await c.hitSliding("t", "r", 3, W, t0 + 3)).allowed, false);
    await c.close();
  } finally {
    await a.close();
    await b.close();
    kv.close();
  }
});

Deno.test("WindowCounter.hitSliding(): concurrent first hits on new subjects are all counted and written", async () => {
  const kv = await Deno.openKv(":memory:");
  const W = 60_000;
  const t0 = Date.now();
  const counter = new WindowCounter(kv);
  try {
    // Each new subject's log is loading from KV when the next one is created.
    const first = await Promise.all(["a", "b", "c"].map((who) => counter.hitSliding("t", who, 3, W, t0)));
    assert.deepEqual(first.map((h) => h.remaining), [2, 2, 2]);
    assert.equal((await counter.hitSliding("t", "a", 3, W, t0 + 1)).remaining, 1, "the second hit on a sees the first");
    await counter.flush();
    assert.deepEqual((await kv.get(kvKeys.slidingLimiter("t", "a"))).value, [t0, t0 + 1]);
    assert.deepEqual((await kv.get(kvKeys.slidingLimiter("t", "b"))).value, [t0]);
    assert.deepEqual((await kv.get(kvKeys.slidingLimiter("t", "c"))).value, [t0]);
  } finally {
    await counter.close();
    kv.close();
  }
});

Deno.test("WindowCounter.hitSliding(): a log read but not yet hit is not evicted by another subject's first hit", async () => {
  const kv = await Deno.openKv(":memory:");
  const W = 60_000;
  const t0 = Date.now();
  let other: Promise<unknown> | undefined;
  // The first read's result reaches a hook (another request resuming) after the log has its (no)
  // times but before the waiting hit counts on it.
  const hooked = new Proxy(kv, {
    get(target, prop) {
      if (prop !== "get") return Reflect.get(target, prop).bind(target);
      return (...args: Parameters<Deno.Kv["get"]>) => {
        const read = target.get(...args);
        if (!other) read.then(() => queueMicrotask(() => (other = counter.hitSliding("t", "b", 3, W, t0))));
        return read;
      };
    },
  });
  const counter = new WindowCounter(hooked);
  try {
    assert.equal((await counter.hitSliding("t", "a", 3, W, t0)).remaining, 2);
    await other;
    assert.equal((await counter.hitSliding("t", "a", 3, W, t0 + 1)).remaining, 1);
    await counter.flush();
    assert.deepEqual((await kv.get(kvKeys.slidingLimiter("t", "a"))).value, [t0, t0 + 1]);
  } finally {
    await counter.close();
    kv.close();
  }
});

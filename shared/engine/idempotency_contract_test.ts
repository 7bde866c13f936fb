import assert from "node:assert/strict";
import { engineTest, randomScope } from "./testing.ts";

const DAY_MS = 86_400_000;
const answer = { status: 201, contentType: "application/json", body: '{"id":"c-1"}' };

/** A request's claim: `fingerprint` stands for its body. */
function by(fingerprint: string) {
  return { fingerprint, inFlightMs: 60_000 };
}

engineTest("IdempotencyStore: a claimed key is in flight, then answers what it completed with", async ({ hot }) => {
  const scope = randomScope();
  const store = hot.idempotency;
  assert.deepEqual(await store.claim(scope, "k", by("a")), { claimed: true });
  const inFlight = { claimed: false, record: { state: "in_flight", fingerprint: "a" } };
  assert.deepEqual(await store.claim(scope, "k", by("a")), inFlight);
  assert.equal(await store.complete(scope, "k", { fingerprint: "a", answer, ttlMs: DAY_MS }), true);
  const done = { claimed: false, record: { state: "done", fingerprint: "a", answer } };
  assert.deepEqual(await store.claim(scope, "k", by("a")), done);
  assert.deepEqual(await store.claim(scope, "k", by("b")), done, "another body finds the first record");
  assert.deepEqual(await store.claim(randomScope(), "k", by("a")), { claimed: true }, "scopes are apart");
});

engineTest("IdempotencyStore: a released key is claimed again", async ({ hot }) => {
  const scope = randomScope();
  assert.deepEqual(await hot.idempotency.claim(scope, "k", by("a")), { claimed: true });
  await hot.idempotency.release(scope, "k");
  assert.deepEqual(await hot.idempotency.claim(scope, "k", by("a")), { claimed: true });
});

engineTest("IdempotencyStore: a key raced 50 ways, also from another process, is claimed once", async (engine) => {
  const scope = randomScope();
  const processes = [engine.hot, engine.another()];
  const claims = await Promise.all(
    Array.from({ length: 50 }, (_, i) => processes[i % 2].idempotency.claim(scope, "raced", by("a"))),
  );
  assert.equal(claims.filter((c) => c.claimed).length, 1);
  for (const c of claims.filter((c) => !c.claimed)) {
    assert.deepEqual(c, { claimed: false, record: { state: "in_flight", fingerprint: "a" } });
  }
});

engineTest("IdempotencyStore: keeps and answers an answer far over a KV value (300 KB)", async ({ hot }) => {
  const scope = randomScope();
  // Random text, so that it stays larger than one KV value when compressed.
  const body = JSON.stringify({ data: Array.from({ length: 9_000 }, () => crypto.randomUUID()) });
  assert.ok(body.length > 300_000);
  const large = { ...answer, status: 200, body };
  await hot.idempotency.claim(scope, "big", by("a"));
  assert.equal(await hot.idempotency.complete(scope, "big", { fingerprint: "a", answer: large, ttlMs: DAY_MS }), true);
  assert.deepEqual(await hot.idempotency.claim(scope, "big", by("a")), {
    claimed: false,
    record: { state: "done", fingerprint: "a", answer: large },
  });
});

engineTest("IdempotencyStore: answers completed at once for 30 keys are each kept with their key", async ({ hot }) => {
  const scope = randomScope();
  const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
  const claims = await Promise.all(keys.map((key) => hot.idempotency.claim(scope, key, by(key))));
  assert.ok(claims.every((c) => c.claimed));
  const answerOf = (key: string) => ({ ...answer, body: JSON.stringify({ key }) });
  await Promise.all(
    keys.map((key) => hot.idempotency.complete(scope, key, { fingerprint: key, answer: answerOf(key), ttlMs: DAY_MS })),
  );
  const again = await Promise.all(keys.map((key) => hot.idempotency.claim(scope, key, by(key))));
  assert.deepEqual(
    again,
    keys.map((key) => ({ claimed: false, record: { state: "done", fingerprint: key, answer: answerOf(key) } })),
  );
});

import assert from "node:assert/strict";
import { KvCommitter } from "../../kv.ts";
import { setLogLevel } from "../../log.ts";
import { CheckedCommitter } from "./checked_commit.ts";
import { KvIdempotency } from "./idempotency.ts";

Deno.test("KvIdempotency.complete() does not keep an answer over 12 parts of KV values, and frees its key", async () => {
  setLogLevel("silent");
  const kv = await Deno.openKv(":memory:");
  const store = new KvIdempotency(kv, new KvCommitter(kv), new CheckedCommitter(kv));
  try {
    // Random text: over 720 KB gzipped, past what one KV commit may carry.
    const body = JSON.stringify(Array.from({ length: 50_000 }, () => crypto.randomUUID()));
    const claim = { fingerprint: "p", inFlightMs: 60_000 };
    assert.deepEqual(await store.claim("team", "big", claim), { claimed: true });
    const answer = { status: 200, contentType: "application/json", body };
    assert.equal(await store.complete("team", "big", { fingerprint: "p", answer, ttlMs: 60_000 }), false);
    assert.deepEqual(await store.claim("team", "big", claim), { claimed: true }, "a retry runs again");
  } finally {
    kv.close();
  }
});

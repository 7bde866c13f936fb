import assert from "node:assert/strict";
import { dbTest, testRuntime } from "../../testing.ts";
import { randomScope } from "../testing.ts";
import { postgresHotState } from "./hot_state.ts";
import { sweepExpired } from "./sweep.ts";

dbTest(
  "sweepExpired() deletes hot state past its expiry, which reads already ignored, and keeps the rest",
  async () => {
    const { sql } = (await testRuntime()).deps;
    const hot = postgresHotState(sql);
    const scope = randomScope();
    await hot.otpSessions.put(scope, "gone", {}, { expected: null, ttlMs: 1, activeUntil: Date.now() + 60_000 });
    await hot.otpSessions.put(scope, "kept", {}, { expected: null, ttlMs: 60_000, activeUntil: null });
    await hot.idempotency.claim(scope, "crashed", { fingerprint: "p", inFlightMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await hot.otpSessions.get(scope, "gone"), null);
    assert.equal((await hot.otpSessions.countActive(scope, Date.now())).count, 0);
    assert.deepEqual(
      await hot.idempotency.claim(scope, "crashed", { fingerprint: "p", inFlightMs: 1 }),
      { claimed: true },
      "a stale claim is taken",
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(await sweepExpired(sql) >= 2);
    const left = await sql`
    select id from engine_records where scope = ${scope}
    union all select key from engine_idempotency where scope = ${scope}`;
    assert.deepEqual(left.map((r) => r.id), ["kept"]);
    assert.equal(
      await hot.otpSessions.put(scope, "gone", {}, { expected: null, ttlMs: 60_000, activeUntil: null }),
      true,
    );
  },
);

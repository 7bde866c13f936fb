import assert from "node:assert/strict";
import { retryAfterMs } from "./types.ts";

Deno.test("retryAfterMs() reads seconds or an HTTP date, and nothing else", () => {
  const now = Date.parse("2026-11-21T12:00:00Z");
  assert.equal(retryAfterMs("120", now), 120_000);
  assert.equal(retryAfterMs(" 0 ", now), 0);
  assert.equal(retryAfterMs("Sat, 21 Nov 2026 12:01:30 GMT", now), 90_000);
  assert.equal(retryAfterMs("Sat, 21 Nov 2026 11:59:00 GMT", now), 0);
  for (const bad of [undefined, null, "", "soon", "-5", "1.5"]) {
    assert.equal(retryAfterMs(bad, now), undefined, String(bad));
  }
});

import assert from "node:assert/strict";
import { failureOutcome, networkFailure, ProviderError, retryAfterMs } from "./types.ts";

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

Deno.test("failureOutcome() tells refused, temporary and unknown apart; an unexpected error is unknown", () => {
  assert.equal(failureOutcome(new ProviderError("invalid number")), "refused");
  assert.equal(failureOutcome(new ProviderError("503", { temporary: true })), "temporary");
  assert.equal(failureOutcome(new ProviderError("timeout", { temporary: true, maybeAccepted: true })), "unknown");
  assert.equal(failureOutcome(new TypeError("bug")), "unknown");
});

Deno.test("networkFailure() is certainly-not-sent only for a connection never made", () => {
  const refused = new TypeError("fetch failed", {
    cause: new Error("tcp connect error: Connection refused (os error 111)"),
  });
  assert.equal(networkFailure("Cannot send", refused).maybeAccepted, false);
  assert.equal(
    networkFailure("Cannot send", Object.assign(new Error("x"), { code: "ENOTFOUND" })).maybeAccepted,
    false,
  );
  const reset = new TypeError("fetch failed", { cause: new Error("connection reset by peer") });
  assert.equal(networkFailure("Cannot send", reset).maybeAccepted, true);
  assert.equal(networkFailure("Cannot send", reset).temporary, true);
});

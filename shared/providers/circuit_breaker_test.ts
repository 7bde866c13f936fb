import assert from "node:assert/strict";
import { CircuitBreakers } from "./circuit_breaker.ts";

Deno.test("CircuitBreakers opens after N failures in a row, and a refusal or a send resets the count", () => {
  const breakers = new CircuitBreakers({ threshold: 3, cooldownMs: 1_000 });
  breakers.record("a", "temporary", 0);
  breakers.record("a", "unknown", 0);
  breakers.record("a", "refused", 0);
  breakers.record("a", "temporary", 0);
  breakers.record("a", "temporary", 0);
  assert.equal(breakers.state("a", 0), "closed");
  assert.equal(breakers.tryAcquire("a", 0), true);
  breakers.record("a", "temporary", 10);
  assert.equal(breakers.state("a", 10), "open");
  assert.equal(breakers.tryAcquire("a", 500), false);
  assert.equal(breakers.state("b", 10), "closed", "per account");
});

Deno.test("CircuitBreakers lets one probe through after the cool-down; its failure opens the circuit again", () => {
  const breakers = new CircuitBreakers({ threshold: 1, cooldownMs: 1_000 });
  breakers.record("a", "temporary", 0);
  assert.equal(breakers.state("a", 1_000), "half-open");
  assert.equal(breakers.tryAcquire("a", 1_000), true, "the probe");
  assert.equal(breakers.tryAcquire("a", 1_001), false, "one probe at a time");
  breakers.record("a", "unknown", 1_500);
  assert.equal(breakers.state("a", 2_000), "open", "a new cool-down from the failed probe");
  assert.equal(breakers.tryAcquire("a", 2_500), true);
  breakers.record("a", "sent", 2_600);
  assert.equal(breakers.state("a", 2_600), "closed");
});

Deno.test("CircuitBreakers lets another probe through when one is given back unmade", () => {
  const breakers = new CircuitBreakers({ threshold: 1, cooldownMs: 1_000 });
  breakers.record("a", "temporary", 0);
  assert.equal(breakers.tryAcquire("a", 1_000), true);
  breakers.cancel("a");
  assert.equal(breakers.tryAcquire("a", 1_001), true, "the next message probes it");
  assert.equal(breakers.tryAcquire("a", 1_002), false);
});

import assert from "node:assert/strict";
import { AcceptPressure } from "./pressure.ts";

Deno.test("AcceptPressure.rate() counts the sends of the last 300 ms", () => {
  const p = new AcceptPressure();
  const t = 1_000_000;
  assert.equal(p.rate(t), 0);
  for (let i = 0; i < 300; i++) p.note(t + i);
  assert.equal(p.rate(t + 299), 1_000);
  assert.equal(p.rate(t + 650), 0);
});

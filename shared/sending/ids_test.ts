import assert from "node:assert/strict";
import { newUuidV7, uuidV7Time } from "./ids.ts";

Deno.test("newUuidV7() makes a version 7 UUID whose time reads back", () => {
  const now = Date.UTC(2026, 10, 21, 10, 0, 0, 123);
  const id = newUuidV7(now);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(uuidV7Time(id), now);
  assert.notEqual(newUuidV7(now), id);
});

Deno.test("uuidV7Time() is undefined for a UUID of another version", () => {
  assert.equal(uuidV7Time(crypto.randomUUID()), undefined);
  assert.equal(uuidV7Time("nope"), undefined);
});

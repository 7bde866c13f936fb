import assert from "node:assert/strict";
import { newUlid, newUuidV7, uuidV7Time } from "./ids.ts";

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

Deno.test("newUlid() makes valid, increasing ulids whose random part uses every character evenly", () => {
  const ids = Array.from({ length: 5_000 }, (_, i) => newUlid(1_700_000_000_000 + Math.floor(i / 10)));
  for (const id of ids) assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.deepEqual([...ids].sort(), ids, "increasing, within a millisecond too");
  assert.equal(new Set(ids).size, ids.length);
  // The first random character of each new millisecond: 500 draws over 32 characters.
  const counts = new Map<string, number>();
  for (let i = 0; i < ids.length; i += 10) counts.set(ids[i][10], (counts.get(ids[i][10]) ?? 0) + 1);
  assert.equal(counts.size, 32);
});

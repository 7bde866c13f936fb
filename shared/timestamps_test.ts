import assert from "node:assert/strict";
import { parseTimestamp } from "./timestamps.ts";

Deno.test("parseTimestamp() reads ISO 8601 dates and timestamps, UTC unless a zone is given", () => {
  assert.equal(parseTimestamp("2026-11-21T10:00:00.000Z"), Date.UTC(2026, 10, 21, 10));
  assert.equal(parseTimestamp("2026-11-21T10:00:00"), Date.UTC(2026, 10, 21, 10));
  assert.equal(parseTimestamp("2026-11-21T10:00"), Date.UTC(2026, 10, 21, 10));
  assert.equal(parseTimestamp("2026-11-21T12:00:00+02:00"), Date.UTC(2026, 10, 21, 10));
  assert.equal(parseTimestamp("2026-11-21T10:00:00.123456Z"), Date.UTC(2026, 10, 21, 10, 0, 0, 123));
  assert.equal(parseTimestamp("2026-11-21"), Date.UTC(2026, 10, 21));
  assert.equal(parseTimestamp("2028-02-29"), Date.UTC(2028, 1, 29));
});

Deno.test("parseTimestamp() refuses what is no timestamp, and days that do not exist", () => {
  for (
    const text of [
      "tomorrow",
      "",
      "21/11/2026",
      "2026-13-01",
      "2026-02-30T00:00:00Z",
      "2027-02-29",
      "2026-11-21Tnoon",
      "0000-01-01",
      "0999-12-31",
    ]
  ) {
    assert.equal(parseTimestamp(text), undefined, text);
  }
});

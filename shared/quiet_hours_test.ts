import assert from "node:assert/strict";
import { heldUntil, isTimeOfDay, isTimeZone, recipientZone } from "./quiet_hours.ts";

const at = (iso: string) => Date.parse(iso);
const held = (now: string, start: string, end: string, zone: string) => {
  const until = heldUntil(at(now), { start, end }, zone);
  return until === null ? null : new Date(until).toISOString();
};

Deno.test("a window within one day holds until its end, and lets through what is outside it", () => {
  // Paris is UTC+1 in January: 13:30 UTC is 14:30 there.
  assert.equal(held("2026-01-15T13:30:00Z", "14:00", "16:00", "Europe/Paris"), "2026-01-15T15:00:00.000Z");
  assert.equal(held("2026-01-15T13:00:00Z", "14:00", "16:00", "Europe/Paris"), "2026-01-15T15:00:00.000Z", "start");
  assert.equal(held("2026-01-15T12:59:59Z", "14:00", "16:00", "Europe/Paris"), null, "a second before");
  assert.equal(held("2026-01-15T15:00:00Z", "14:00", "16:00", "Europe/Paris"), null, "the end is outside");
});

Deno.test("a window across midnight holds the evening until tomorrow's end and the night until today's", () => {
  // New York is UTC-5 in January.
  const zone = "America/New_York";
  assert.equal(held("2026-01-16T03:30:00Z", "22:00", "07:00", zone), "2026-01-16T12:00:00.000Z", "22:30 local");
  assert.equal(held("2026-01-16T09:00:00Z", "22:00", "07:00", zone), "2026-01-16T12:00:00.000Z", "04:00 local");
  assert.equal(held("2026-01-16T12:00:00Z", "22:00", "07:00", zone), null, "07:00 local");
  assert.equal(held("2026-01-16T02:59:00Z", "22:00", "07:00", zone), null, "21:59 local");
  // The last day of a month: tomorrow is the next month's first.
  assert.equal(held("2026-02-01T04:00:00Z", "22:00", "07:00", zone), "2026-02-01T12:00:00.000Z", "Jan 31 23:00");
});

Deno.test("the same instant is quiet in one zone and not in another", () => {
  const now = "2026-06-01T21:30:00Z";
  // 06:30 in Tokyo (inside 22:00-07:00), 17:30 in New York (outside).
  assert.equal(held(now, "22:00", "07:00", "Asia/Tokyo"), "2026-06-01T22:00:00.000Z");
  assert.equal(held(now, "22:00", "07:00", "America/New_York"), null);
});

Deno.test("the window keeps its local hours across daylight-saving changes", () => {
  const zone = "Europe/Paris";
  // Night of the spring change (29 March 2026, 02:00 -> 03:00): 23:00 CET (UTC+1) is held until
  // 07:00 CEST (UTC+2), 7 hours of wall clock but 7 of real time less the skipped hour.
  assert.equal(held("2026-03-28T22:00:00Z", "22:00", "07:00", zone), "2026-03-29T05:00:00.000Z");
  // Night of the autumn change (25 October 2026, 03:00 -> 02:00).
  assert.equal(held("2026-10-24T21:00:00Z", "22:00", "07:00", zone), "2026-10-25T06:00:00.000Z");
  // An end in the skipped hour moves forward by the gap, as clocks do: 02:30 reads 03:30 CEST.
  assert.equal(held("2026-03-28T23:30:00Z", "00:00", "02:30", zone), "2026-03-29T01:30:00.000Z");
  // An end in the repeated hour: its first occurrence, unless that is already past.
  assert.equal(held("2026-10-24T23:00:00Z", "00:00", "02:30", zone), "2026-10-25T00:30:00.000Z");
  assert.equal(held("2026-10-25T01:10:00Z", "02:00", "02:40", zone), "2026-10-25T01:40:00.000Z", "second 02:10");
});

Deno.test("a window whose ends are equal holds nothing", () => {
  assert.equal(held("2026-01-15T13:30:00Z", "14:30", "14:30", "UTC"), null);
});

Deno.test("times of day are HH:MM and zones are those Intl knows", () => {
  for (const t of ["00:00", "07:05", "23:59"]) assert.ok(isTimeOfDay(t), t);
  for (const t of ["24:00", "7:00", "07:60", "07:00:00", "", "noon"]) assert.ok(!isTimeOfDay(t), t);
  for (const z of ["Europe/Paris", "America/Argentina/Buenos_Aires", "UTC"]) assert.ok(isTimeZone(z), z);
  for (const z of ["Mars/Olympus", "", "Europe/Pari"]) assert.ok(!isTimeZone(z), z);
  const quiet = { start: "22:00", end: "07:00", timezone: "Europe/Paris" };
  assert.equal(recipientZone(quiet, "Asia/Tokyo"), "Asia/Tokyo");
  assert.equal(recipientZone(quiet, "Nowhere/Land"), "Europe/Paris", "an unknown zone: the team's");
  assert.equal(recipientZone(quiet, null), "Europe/Paris");
});

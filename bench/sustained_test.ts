import assert from "node:assert/strict";
import { type DepthSample, highestKeptUp, sampleAt, verdict } from "./sustained.ts";
import { dueTimeOf } from "./twilio_probe.ts";

/** Samples every second of a 10 s run at 1,000/s: `unanswered(t)` requests waiting, `depth(t)` accepted not delivered. */
const run = (depth: (t: number) => number, unanswered: (t: number) => number = () => 0): DepthSample[] =>
  Array.from({ length: 11 }, (_, t) => ({
    t,
    sent: 1000 * t,
    accepted: 1000 * t - unanswered(t),
    delivered: 1000 * t - unanswered(t) - depth(t),
  }));

Deno.test("a step keeps up when its backlog is flat over the second half, however deep", () => {
  // Deferred by two seconds throughout: deep, but not growing.
  assert.deepEqual(verdict(1000, 10, 10_000, 0, run((t) => Math.min(t, 2) * 1000)), {
    keptUp: true,
    why: "backlog flat",
  });
});

Deno.test("a step falls behind when its backlog grows, when sends are refused, or on errors", () => {
  // Delivering 800 of each 1,000 a second: the backlog grows by 1,000 over the second half.
  assert.equal(verdict(1000, 10, 10_000, 0, run((t) => 200 * t)).keptUp, false);
  // Delivering all it accepts, but answering 800 a second: the requests pile up before the service.
  assert.equal(verdict(1000, 10, 10_000, 0, run(() => 0, (t) => 200 * t)).keptUp, false);
  assert.match(verdict(1000, 10, 9_000, 0, run(() => 0)).why, /accepted 9000 of 10000/);
  assert.match(verdict(1000, 10, 10_000, 3, run(() => 0)).why, /3 errors/);
  assert.equal(verdict(1000, 10, 10_000, 0, []).keptUp, false);
});

Deno.test("sampleAt picks the sample nearest the time asked", () => {
  const samples = [
    { t: 0.25, sent: 1, accepted: 1, delivered: 0 },
    { t: 4.9, sent: 2, accepted: 2, delivered: 1 },
    { t: 5.3, sent: 3, accepted: 3, delivered: 2 },
  ];
  assert.equal(sampleAt(samples, 5).accepted, 2);
  assert.equal(sampleAt(samples, 0).accepted, 1);
});

Deno.test("highestKeptUp is the fastest offered rate that kept up, not the last tried", () => {
  assert.equal(highestKeptUp([{ offered: 2000, keptUp: true }, { offered: 4000, keptUp: false }]), 2000);
  assert.equal(highestKeptUp([{ offered: 2000, keptUp: false }]), undefined);
});

Deno.test("dueTimeOf reads the due time from the text of a Twilio create", () => {
  const form = new URLSearchParams({
    To: "+15550000001",
    From: "+15005550006",
    Body: "Your bench code is 1764180000123.4.",
  });
  assert.equal(dueTimeOf(form.toString()), 1764180000123.4);
  assert.ok(Number.isNaN(dueTimeOf(new URLSearchParams({ Body: "Your bench code is s." }).toString())));
});

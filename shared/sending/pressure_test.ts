import assert from "node:assert/strict";
import { AcceptPressure, burstDelay, DeferredJobs, holdDuringBurst } from "./pressure.ts";

Deno.test("AcceptPressure.rate() counts the sends of the last 300 ms", () => {
  const p = new AcceptPressure();
  const t = 1_000_000;
  assert.equal(p.rate(t), 0);
  for (let i = 0; i < 300; i++) p.note(t + i);
  assert.equal(p.rate(t + 299), 1_000);
  assert.equal(p.rate(t + 650), 0);
});

Deno.test("burstDelay() is 0 outside a burst, then the burst's age, at least 1 s and at most the maximum", () => {
  const pressure = new AcceptPressure();
  const d = { pressure, busyRate: 100, maxDelayMs: 5_000 };
  let t = 2_000_000;
  assert.equal(burstDelay(d, t), 0, "nothing accepted");
  // 200 a second for 8 s: above the busy rate.
  const accept = (ms: number) => {
    for (const end = t + ms; t < end; t += 5) pressure.note(t);
  };
  accept(300);
  assert.equal(burstDelay(d, t), 1_000, "a burst just seen waits the least");
  accept(2_500);
  assert.equal(burstDelay(d, t), 2_500);
  accept(5_000);
  assert.equal(burstDelay(d, t), 5_000, "never more than the maximum");
  t += 1_000;
  assert.equal(burstDelay(d, t), 0, "the burst is over");
  accept(300);
  assert.equal(burstDelay(d, t), 1_000, "a new burst starts from the least again");
  assert.equal(burstDelay({ ...d, busyRate: 0 }, t), 0, "busy rate 0: never defers");
  assert.equal(burstDelay({ ...d, maxDelayMs: 0 }, t), 0, "maximum 0: never defers");
});

Deno.test("DeferredJobs counts the jobs not yet due, and forgets them once due without being read", () => {
  const jobs = new DeferredJobs();
  jobs.add(1_000, 2, 0);
  jobs.add(3_000, 1, 0);
  assert.equal(jobs.waiting(500), 3);
  assert.equal(jobs.waiting(1_000), 1);
  assert.equal(jobs.waiting(3_000), 0);
  // A long burst nobody watches: what is due is dropped as new jobs come.
  for (let t = 10_000; t < 100_000; t += 10) jobs.add(t + 1_000, 1, t);
  assert.ok(jobs.bucketsKept <= 11, `buckets kept: ${jobs.bucketsKept}`);
  assert.ok(jobs.waiting(100_000) <= 100, `still counted: ${jobs.waiting(100_000)}`);
  assert.equal(jobs.waiting(200_000), 0);
});

Deno.test("holdDuringBurst() waits while the burst lasts, at most maxDelayMs, and not at all outside one", async () => {
  let rate = 0;
  const pressure = { rate: () => rate } as unknown as AcceptPressure;
  const d = { pressure, busyRate: 100, maxDelayMs: 200 };
  /** True when the hold is over by the time a 0 ms timer fires (a hold that waits sleeps 50 ms at least). */
  const overAtOnce = async (hold: Promise<void>) => {
    let over = false;
    hold.then(() => (over = true));
    await new Promise((r) => setTimeout(r, 0));
    const atOnce = over;
    await hold;
    return atOnce;
  };
  assert.equal(await overAtOnce(holdDuringBurst(d, Date.now())), true, "no burst: no wait");
  rate = 1_000;
  assert.equal(await overAtOnce(holdDuringBurst({ ...d, maxDelayMs: 0 }, Date.now())), true, "deferral off");
  assert.equal(await overAtOnce(holdDuringBurst({ ...d, busyRate: 0 }, Date.now())), true, "deferral off");

  const arrived = Date.now();
  assert.equal(await overAtOnce(holdDuringBurst(d, arrived)), false, "a burst: held");
  assert.ok(Date.now() - arrived >= d.maxDelayMs, "held until maxDelayMs while the burst lasts");

  // The burst ends long before the maximum: the hold ends with it.
  const ends = setTimeout(() => (rate = 0), 100);
  const start = Date.now();
  await holdDuringBurst({ ...d, maxDelayMs: 600_000 }, start);
  clearTimeout(ends);
  assert.equal(rate, 0, "released only once the burst ended");
});

import assert from "node:assert/strict";
import { AcceptPressure, holdDuringBurst, inBurst } from "./pressure.ts";

Deno.test("AcceptPressure.rate() counts the sends of the last 300 ms", () => {
  const p = new AcceptPressure();
  const t = 1_000_000;
  assert.equal(p.rate(t), 0);
  for (let i = 0; i < 300; i++) p.note(t + i);
  assert.equal(p.rate(t + 299), 1_000);
  assert.equal(p.rate(t + 650), 0);
});

Deno.test("inBurst() is true only above the busy rate, and never when deferral is off", () => {
  const pressure = new AcceptPressure();
  const d = { pressure, busyRate: 100, maxDelayMs: 5_000 };
  const t = 1_000_000;
  assert.equal(inBurst(d, t), false, "nothing accepted");
  pressure.note(t, 20);
  assert.equal(inBurst(d, t), false, "≈ 67 a second: under the busy rate");
  pressure.note(t, 100);
  assert.equal(inBurst(d, t), true, "400 a second");
  assert.equal(inBurst({ ...d, busyRate: 0 }, t), false, "busy rate 0: never");
  assert.equal(inBurst({ ...d, maxDelayMs: 0 }, t), false, "maximum 0: never");
  assert.equal(inBurst(d, t + 400), false, "the burst is over");
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

import assert from "node:assert/strict";
import type { SendGroupJob } from "../shared/sending/jobs.ts";
import { sendKeys } from "../shared/sending/keys.ts";
import { acceptPressure } from "../shared/sending/pressure.ts";
import { SPOOL_SWEEP_AGE_MS, spooled, spoolKeys, spoolSlot } from "../shared/engine/kv/spool.ts";
import { testSendSpec } from "../shared/sending/testing.ts";
import { dbTest, kvEngineTest, onKv } from "../shared/testing.ts";
import { startWorker } from "./queue.ts";
import { sendingFixture } from "./testing.ts";

kvEngineTest("sends accepted in a burst are spooled, then delivered once each when it ends", async () => {
  const f = await sendingFixture("pro", { SEND_DEFER_RATE: 1_000 });
  await f.fund(10);
  await f.template("sms", "burst", { body: "burst {{n}}" });
  // A burst far over SEND_DEFER_RATE (1,000 a second), kept up while the sends are accepted (the
  // rate is counted over the last 300 ms, and a loaded machine may take longer to accept them).
  const burst = () => acceptPressure.note(Date.now(), 100_000);
  burst();
  const keepUp = setInterval(burst, 50);
  const phones = Array.from({ length: 5 }, (_, i) => `+1415555${String(1000 + i)}`);
  const answers = await Promise.all(phones.map((phone, i) =>
    f.send("/api/v1/sms/send", {
      template_key: "burst",
      recipient_type: "direct_sms",
      direct_phone: phone,
      variables: { n: i },
    })
  )).finally(() => clearInterval(keepUp));
  for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.body));
  assert.ok(spooled.pages > 0, "spooled, not enqueued");
  const first = await (await f.get(`/api/v1/triggers/${answers[0].body.trigger_id}`)).json();
  assert.equal(first.status, "pending");

  for (const a of answers) {
    const trigger = await f.waitForTrigger(a.body.trigger_id);
    assert.equal(trigger.status, "completed");
    assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
    const rows = await f.deps.sql`select to_address, body from outbox_all where trigger_id = ${a.body.trigger_id}`;
    assert.equal(rows.length, 1, "delivered once");
  }
  assert.equal(spooled.pages, 0, "every page moved");
});

kvEngineTest("workflow starts accepted in a burst are spooled, then run once each when it ends", async () => {
  const f = await sendingFixture("pro", { SEND_DEFER_RATE: 1_000 });
  await f.template("email", "spooled", { subject: "Spooled {{contact_first_name}}", html: "<p>hi</p>" });
  const created = await f.post("/api/v1/workflows", {
    name: `spool ${crypto.randomUUID().slice(0, 6)}`,
    event_type: "spool_test",
    steps: [{ step_order: 1, channel_type: "email", configuration: { template_id: "spooled", delay_minutes: 0 } }],
  });
  assert.equal(created.status, 201);
  const workflow = await created.json();
  const contacts = await Promise.all(Array.from({ length: 4 }, (_, i) => f.contact({ first_name: `C${i}` })));
  acceptPressure.note(Date.now(), 100_000);
  const before = spooled.pages;
  const answers = await Promise.all(contacts.map((c) =>
    f.send("/api/v1/workflows/trigger", {
      workflow_id: workflow.id,
      recipient_type: "contact",
      contact_external_id: c.external_id,
    })
  ));
  for (const a of answers) assert.equal(a.status, 201, JSON.stringify(a.body));
  assert.ok(spooled.pages > before, "spooled, not enqueued");

  for (const [i, a] of answers.entries()) {
    const trigger = await f.waitForTrigger(a.body.trigger_id);
    assert.equal(trigger.status, "completed");
    assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
    const rows = await f.deps.sql<{ to_address: string; subject: string }[]>`
      select to_address, subject from outbox_all where trigger_id = ${a.body.trigger_id}`;
    assert.deepEqual(rows.map((r) => [r.to_address, r.subject]), [[contacts[i].email, `Spooled C${i}`]]);
  }
});

dbTest("the running worker's sweep delivers a spool page its drain job missed", async () => {
  const f = await sendingFixture();
  await f.template("sms", "swept", { body: "swept" });
  // A worker of its own (on a KV of its own), sweeping every 50 ms instead of every 10 s.
  const kv = await Deno.openKv(":memory:");
  const deps = onKv(f.deps, kv);
  const worker = startWorker(deps, { spoolSweepMs: 50 });
  try {
    const spec = testSendSpec(f.team.id, {}, "swept");
    const job: SendGroupJob = { type: "send-group", id: crypto.randomUUID(), sends: [spec], attempt: 0 };
    // Spooled over a minute ago, and no drain job for its second.
    const key = spoolKeys.page(spoolSlot(Date.now() - SPOOL_SWEEP_AGE_MS - 2_000), job.id);
    await kv.set(key, { job, undelivered: sendKeys.undelivered(spec.trigger_id, job.id) });

    // Well before the default sweep's first run (10 s).
    const deadline = Date.now() + 5_000;
    while ((await f.outbox(spec.trigger_id)).length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.deepEqual((await f.outbox(spec.trigger_id)).map((m) => [m.to_address, m.body]), [["+14155550123", "swept"]]);
    assert.equal((await kv.get(key)).versionstamp, null, "the page is gone");
  } finally {
    worker.stop();
    kv.close();
  }
});

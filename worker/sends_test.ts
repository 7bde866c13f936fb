import assert from "node:assert/strict";
import { MAX_QUEUE_DELAY_MS, type SendStoredJob } from "../shared/sending/jobs.ts";
import { testSendSpec } from "../shared/sending/testing.ts";
import { dbTest } from "../shared/testing.ts";
import { startWorker } from "./queue.ts";
import { handleSendGroup, handleSendStored } from "./sends.ts";
import { randomToken, sendingFixture, withMessagesRefusedTo } from "./testing.ts";
import { seeingEnqueues } from "./sms_testing.ts";

dbTest("a send the database refuses does not hold back the others accepted with it", async () => {
  const f = await sendingFixture();
  const other = await sendingFixture();
  await f.template("sms", "ok", { body: "fine" });
  const good = testSendSpec(f.team.id, {}, "ok");
  // Another team's push to a token whose message row Postgres refuses, every time.
  const token = randomToken(40);
  const bad = testSendSpec(other.team.id, {
    trigger_type: "push",
    recipient_type: "direct_push",
    recipient: { type: "direct", address: token, platform: "android" },
    executions: [{
      id: crypto.randomUUID(),
      content: { channel: "push", title: "T", body: "B", category: "transactional" },
    }],
  });
  const job = { type: "send-group" as const, id: crypto.randomUUID(), sends: [bad, good], attempt: 0 };
  // The group completes (the bad send fails alone) rather than failing whole.
  await withMessagesRefusedTo(f.deps, token, () => handleSendGroup(startWorker(f.deps).context, job));
  assert.deepEqual((await f.outbox(good.trigger_id)).map((m) => m.body), ["fine"]);
  assert.equal((await f.waitForTrigger(good.trigger_id)).status, "completed");
  assert.deepEqual(await other.outbox(bad.trigger_id), []);
  assert.equal((await other.waitForTrigger(bad.trigger_id)).status, "failed");
});

dbTest(
  "a send scheduled past the queue's 30-day delay is accepted, and its job waits again until it is due",
  async () => {
    const f = await sendingFixture();
    await f.fund(1);
    await f.template("sms", "later", { body: "Much later" });
    const at = new Date(Date.now() + 45 * 24 * 3_600_000);
    const res = await f.post("/api/v1/sms/send", {
      template_key: "later",
      recipient_type: "direct_sms",
      direct_phone: "+14155550123",
      triggerAt: at.toISOString(),
    });
    const body = await res.json();
    assert.equal(res.status, 201, JSON.stringify(body));
    assert.equal(body.scheduled_for, at.toISOString());

    // Its job fired early (as the first 30-day link of the wait does): it enqueues itself for the rest.
    const worker = startWorker(f.deps).context;
    const job: SendStoredJob = { type: "send-stored", id: crypto.randomUUID(), trigger_id: body.trigger_id };
    job.due_at = at.getTime();
    const again: { job: SendStoredJob; delay?: number }[] = [];
    const seeing = seeingEnqueues(f.deps, (value, options) => {
      if ((value as SendStoredJob).trigger_id === body.trigger_id) {
        again.push({ job: value as SendStoredJob, delay: options.delayMs });
      }
    });
    await handleSendStored({ ...worker, deps: seeing }, job);
    assert.equal(again.length, 1);
    assert.equal(again[0].job.due_at, at.getTime());
    assert.notEqual(again[0].job.id, job.id);
    assert.equal(again[0].delay, MAX_QUEUE_DELAY_MS);
    assert.deepEqual(await f.outbox(body.trigger_id), []);
    assert.equal((await (await f.get(`/api/v1/triggers/${body.trigger_id}`)).json()).status, "pending");

    // The last link, due: the SMS goes out.
    await handleSendStored(worker, { ...job, due_at: Date.now() - 1 });
    assert.equal((await f.waitForTrigger(body.trigger_id)).summary.sent, 1);
    assert.deepEqual((await f.outbox(body.trigger_id)).map((m) => m.body), ["Much later"]);
  },
);

dbTest("a scheduled send whose template is no longer approved when it is due fails with that reason", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "later", { body: "Hi" });
  const res = await f.post("/api/v1/sms/send", {
    template_key: "later",
    recipient_type: "direct_sms",
    direct_phone: "+14155550123",
    triggerAt: new Date(Date.now() + 3_600_000).toISOString(),
  });
  const { trigger_id } = await res.json();
  assert.equal(res.status, 201);
  await f.template("sms", "later", { body: "Hi", status: "pending" });
  // Its job comes due (run here rather than in an hour).
  await handleSendStored(startWorker(f.deps).context, { type: "send-stored", id: crypto.randomUUID(), trigger_id });
  const trigger = await f.waitForTrigger(trigger_id);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 0, failed: 1, filtered: 0 });
  const [job] = (await (await f.get(`/api/v1/sms/executions/${trigger_id}/jobs`)).json()).jobs;
  assert.equal(job.error, "Template 'later' is not approved");
  assert.deepEqual(await f.outbox(trigger_id), []);
  assert.equal(await f.balance(), 1);
});

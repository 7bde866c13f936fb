import assert from "node:assert/strict";
import { dbTest } from "../testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

dbTest("50 simultaneous identical SMS sends with one Idempotency-Key create one trigger and send once", async () => {
  const f = await sendingFixture("enterprise");
  await f.template("sms", "once", { body: "Your code is ready" });
  await f.fund(1);
  const before = await f.balance();
  const body = { template_key: "once", recipient_type: "direct_sms", direct_phone: "+14155550123" };
  const headers = { "Idempotency-Key": crypto.randomUUID() };
  const answers = await Promise.all(
    Array.from({ length: 50 }, () => f.post("/api/v1/sms/send", body, undefined, headers)),
  );
  const bodies = await Promise.all(answers.map((res) => res.json()));
  const statuses = answers.map((res) => res.status);
  assert.ok(statuses.every((s) => s === 201 || s === 409), `unexpected statuses ${statuses}`);
  const created = answers.filter((res) => res.status === 201);
  const firsts = created.filter((res) => res.headers.get("idempotent-replayed") !== "true");
  assert.equal(firsts.length, 1, "exactly one answer is the original, the other 201s are replays");
  const triggerIds = new Set(bodies.filter((b) => b.trigger_id).map((b) => b.trigger_id));
  assert.equal(triggerIds.size, 1, "every 201 carries the same trigger");
  const conflicts = bodies.filter((b) => b.statusCode === 409);
  assert.ok(conflicts.every((b) => b.code === "idempotency_in_progress"));
  assert.equal(created.length + conflicts.length, 50);

  const [triggerId] = triggerIds;
  const trigger = await f.waitForTrigger(triggerId);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  // A retry after the first finished replays it: still one trigger.
  const retry = await f.post("/api/v1/sms/send", body, undefined, headers);
  assert.equal(retry.headers.get("idempotent-replayed"), "true");
  assert.equal((await retry.json()).trigger_id, triggerId);
  const triggers = await f.deps.sql`select id from triggers where team_id = ${f.team.id}`;
  assert.deepEqual(triggers.map((t) => t.id), [triggerId]);
  const messages = await f.deps.sql`select id from messages where team_id = ${f.team.id}`;
  assert.equal(messages.length, 1);
  assert.equal((await f.outbox(triggerId)).length, 1);
  assert.equal(Math.round((before - await f.balance()) * 1e6), 7_500, "charged for one SMS segment");
});

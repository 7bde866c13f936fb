import assert from "node:assert/strict";
import { dbTest } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

dbTest("POST /whatsapp/send fills numbered placeholders and charges the conversation category", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("whatsapp", "order", { body: "Hi {{1}}, order {{2}} shipped", category: "UTILITY" });
  const res = await f.post("/api/v1/whatsapp/send", {
    template_key: "order",
    recipient_type: "direct_whatsapp",
    direct_whatsapp: "+447700900001",
    conversation_category: "UTILITY",
    variables: { "1": "Ann", "2": "#42" },
  });
  const { trigger_id, trigger } = await f.finished(res);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => [m.channel, m.to_address, m.body]), [
    ["whatsapp", "+447700900001", "Hi Ann, order #42 shipped"],
  ]);
  assert.equal(await f.balance(), 0.996);
  const jobs = await (await f.get(`/api/v1/whatsapp/executions/${trigger_id}/jobs`)).json();
  assert.equal(jobs.jobs[0].cost, 0.004);
});

dbTest("POST /whatsapp/send takes variables as a list for {{1}}, {{2}}", async () => {
  const f = await sendingFixture();
  await f.template("whatsapp", "hi", { body: "{{1}} and {{2}}", category: "MARKETING" });
  const res = await f.post("/api/v1/whatsapp/send", {
    template_key: "hi",
    recipient_type: "direct_whatsapp",
    direct_whatsapp: "+447700900002",
    conversation_category: "MARKETING",
    variables: ["one", "two"],
  }, f.keys.test);
  const { trigger_id } = await f.finished(res);
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => m.body), ["one and two"]);
});

dbTest("POST /whatsapp/send MARKETING filters contacts without WhatsApp promotional opt-in", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("whatsapp", "promo", { body: "Sale", category: "MARKETING" });
  await f.contact({ tags: ["wa"], custom_fields: { phone: "+447700900003" } });
  const optedIn = await f.contact({ tags: ["wa"], custom_fields: { phone: "+447700900004" } });
  await f.deps.sql`update contacts set preferences = jsonb_set(preferences, '{whatsapp,promotional}', 'true')
    where id = ${optedIn.id}`;
  const res = await f.post("/api/v1/whatsapp/send", {
    template_key: "promo",
    recipient_type: "tag",
    tag: ["wa"],
    conversation_category: "MARKETING",
  });
  const { trigger_id, trigger } = await f.finished(res);
  assert.deepEqual(trigger.summary, { total_contacts: 2, sent: 1, failed: 0, filtered: 1 });
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => m.to_address), ["+447700900004"]);
  assert.equal(await f.balance(), 0.975);
});

dbTest("POST /whatsapp/send answers the errors of the specification", async () => {
  const f = await sendingFixture();
  await f.template("whatsapp", "ok", { body: "Hi", category: "UTILITY" });
  await f.template("whatsapp", "waiting", { body: "Hi", category: "UTILITY", status: "pending" });
  const base = {
    template_key: "ok",
    recipient_type: "direct_whatsapp",
    direct_whatsapp: "+447700900005",
    conversation_category: "UTILITY",
  };
  const send = (body: Record<string, unknown>) => f.send("/api/v1/whatsapp/send", { ...base, ...body });
  const notApproved = await send({ template_key: "waiting" });
  assert.equal(notApproved.status, 400);
  assert.equal(notApproved.body.message, "Template 'waiting' is not approved");
  const badCategory = await send({ conversation_category: "PROMO" });
  assert.equal(badCategory.status, 400);
  assert.deepEqual(badCategory.body.message, [
    "conversation_category must be one of: MARKETING, UTILITY, AUTHENTICATION",
  ]);
  const mismatch = await send({ conversation_category: "MARKETING" });
  assert.equal(mismatch.status, 400);
  assert.equal(mismatch.body.message, "Template category UTILITY does not match conversation_category MARKETING");
  const poor = await send({});
  assert.equal(poor.status, 400);
  assert.equal(poor.body.message, "Insufficient wallet balance. Required: 0.004, Available: 0");
  const ghost = await send({ recipient_type: "contact", contact_external_id: "ghost" });
  assert.equal(ghost.status, 404);
  assert.equal(ghost.body.message, "Contact with external_id 'ghost' not found");
  const badNumber = await send({ direct_whatsapp: "0044 7700" });
  assert.equal(badNumber.status, 400);
  assert.equal(badNumber.body.message, "direct_whatsapp must be in E.164 format");
  const missing = await send({ template_key: "nope" });
  assert.equal(missing.body.message, "Template 'nope' not found for team");
});

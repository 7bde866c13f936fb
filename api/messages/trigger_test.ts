import assert from "node:assert/strict";
import { setDomainVerified } from "../../shared/identities.ts";
import { dbTest } from "../../shared/testing.ts";
import { type SendingFixture, sendingFixture } from "../../worker/testing.ts";

const TOKEN = "f".repeat(40);

async function withTemplates(f: SendingFixture, key = "alert") {
  await f.template("email", key, { subject: "Alert for {{contact_first_name}}", html: "<p>{{what}}</p>" });
  await f.template("sms", key, { body: "Alert: {{what}}" });
  await f.template("whatsapp", key, { body: "Alert {{1}}", category: "UTILITY" });
  await f.template("push", key, { title: "Alert", body: "{{what}} for {{contact_email}}" });
}

/** POST /messages/trigger of `templateKey` to the contact `externalId`, with `body` on top; the status and JSON. */
function triggerForContact(f: SendingFixture, externalId: string, templateKey: string) {
  return async (body: Record<string, unknown>) => {
    const res = await f.post("/api/v1/messages/trigger", {
      recipient_type: "contact",
      contact_external_id: externalId,
      template_key: templateKey,
      ...body,
    });
    return { status: res.status, body: await res.json() };
  };
}

dbTest("POST /messages/trigger sends one template on several channels, one execution each", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await withTemplates(f);
  const contact = await f.contact({
    external_id: "u-7",
    email: "u7@example.com",
    first_name: "Uma",
    custom_fields: { phone: "+14155550177" },
  });
  await f.device(contact.id, TOKEN);
  const res = await f.post("/api/v1/messages/trigger", {
    recipient_type: "contact",
    contact_external_id: "u-7",
    channels: ["email", "sms", "push"],
    template_key: "alert",
    variables: { what: "Disk full" },
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.success, true);
  assert.equal(body.message, "queued successfully");
  assert.deepEqual(body.channels_triggered, ["email", "sms", "push"]);
  assert.equal(body.executions.length, 3);
  const trigger = await f.waitForTrigger(body.trigger_id);
  assert.equal(trigger.trigger_type, "multi_channel");
  assert.deepEqual(trigger.summary, { total_contacts: 3, sent: 3, failed: 0, filtered: 0 });
  const outbox = await f.outbox(body.trigger_id);
  assert.deepEqual(outbox.map((m) => [m.channel, m.to_address, m.subject, m.body]).sort(), [
    ["email", "u7@example.com", "Alert for Uma", "<p>Disk full</p>"],
    ["push", TOKEN, "Alert", "Disk full for u7@example.com"],
    ["sms", "+14155550177", null, "Alert: Disk full"],
  ]);

  const direct = await (await f.get(`/api/v1/triggers/${body.trigger_id}/direct`)).json();
  assert.equal(direct.trigger_id, body.trigger_id);
  assert.equal(direct.flow_type, "direct_channel");
  assert.deepEqual(direct.executions.map((e: { channel: string }) => e.channel).sort(), ["email", "push", "sms"]);
  const sms = direct.executions.find((e: { channel: string }) => e.channel === "sms");
  assert.equal(sms.jobs_endpoint, `/api/v1/sms/executions/${sms.execution.id}/jobs`);
  assert.deepEqual({ ...sms.execution, id: undefined, created_at: undefined, completed_at: undefined }, {
    id: undefined,
    status: "completed",
    total_contacts: 1,
    sent_count: 1,
    failed_count: 0,
    filtered_count: 0,
    created_at: undefined,
    completed_at: undefined,
  });
  const jobs = await (await f.get(sms.jobs_endpoint)).json();
  assert.equal(jobs.jobs[0].recipient, "+14155550177");
});

dbTest("POST /messages/trigger to a tag counts each channel's contacts", async () => {
  const f = await sendingFixture();
  await withTemplates(f);
  await f.contact({ tags: ["ops"] });
  await f.contact({ tags: ["ops"], is_active: false });
  const res = await f.post("/api/v1/messages/trigger", {
    recipient_type: "tag",
    tags: ["ops"],
    channels: ["email", "push"],
    template_key: "alert",
  }, f.keys.test);
  assert.equal(res.status, 200);
  const trigger = await f.waitForTrigger((await res.json()).trigger_id);
  // Email: 1 sent, 1 filtered. Push: the active contact has no device (failed), the other filtered.
  assert.deepEqual(trigger.summary, { total_contacts: 4, sent: 1, failed: 1, filtered: 2 });
});

dbTest("POST /messages/trigger uses push_title and push_body when there is no push template", async () => {
  const f = await sendingFixture();
  await f.template("email", "note", { subject: "S", html: "H" });
  const contact = await f.contact({ external_id: "p-1" });
  await f.device(contact.id, TOKEN);
  const res = await f.post("/api/v1/messages/trigger", {
    recipient_type: "contact",
    contact_external_id: "p-1",
    channels: ["email", "push"],
    template_key: "note",
    push_title: "Ping",
    push_body: "Pong {{n}}",
    variables: { n: 1 },
  });
  const { trigger_id } = await f.finished(res, 200);
  const push = (await f.outbox(trigger_id)).filter((m) => m.channel === "push");
  assert.deepEqual(push.map((m) => [m.subject, m.body]), [["Ping", "Pong 1"]]);
});

dbTest("POST /messages/trigger answers its errors", async () => {
  const f = await sendingFixture();
  await f.template("email", "only-email", { subject: "S", html: "H" });
  await f.contact({ external_id: "known" });
  const send = triggerForContact(f, "known", "only-email");
  const badChannel = await send({ channels: ["email", "fax"] });
  assert.equal(badChannel.status, 400);
  assert.equal(badChannel.body.message, "Valid channels are: email, sms, whatsapp, push");
  const someMissing = await send({ channels: ["email", "sms"] });
  assert.equal(someMissing.status, 400);
  assert.equal(someMissing.body.message, "Missing templates for channels: sms");
  const noneFound = await send({ channels: ["sms"] });
  assert.equal(noneFound.status, 404);
  assert.equal(noneFound.body.message, "Template 'only-email' not found for channels: sms");
  const ghost = await send({ channels: ["email"], contact_external_id: "ghost" });
  assert.equal(ghost.status, 404);
  assert.equal(ghost.body.message, "Contact with external_id 'ghost' not found");
  const noKey = await send({ channels: ["email"], template_key: undefined });
  assert.deepEqual(noKey.body.message, ["template_key should not be empty"]);
  const noTags = await send({ channels: ["email"], recipient_type: "tag" });
  assert.deepEqual(noTags.body.message, ["tags should not be empty"]);
  const noChannels = await send({ channels: [] });
  assert.equal(noChannels.status, 400);
});

dbTest(
  "POST /messages/trigger refuses an SMS or WhatsApp template not approved, and a sender off the verified domains",
  async () => {
    const f = await sendingFixture();
    await f.fund(1);
    await f.contact({ external_id: "known", custom_fields: { phone: "+14155550123" } });
    await f.template("email", "pending", { subject: "S", html: "H" });
    await f.template("sms", "pending", { body: "Hi", status: "pending" });
    await f.template("whatsapp", "pending", { body: "Hi {{1}}", category: "UTILITY", status: "rejected" });
    const send = triggerForContact(f, "known", "pending");
    for (const channels of [["email", "sms"], ["whatsapp"]]) {
      const refused = await send({ channels });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.message, "Template 'pending' is not approved", channels.join());
    }
    const unverified = await send({ channels: ["email"], from_email: "billing@unverified.test" });
    assert.equal(unverified.status, 400);
    assert.equal(unverified.body.message, "Sender address billing@unverified.test is not on a verified domain");
    await setDomainVerified(f.deps.sql, f.team.id, "verified.test", true);
    const verified = await send({ channels: ["email"], from_email: "billing@verified.test" });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
  },
);

dbTest("POST /messages/trigger with trigger_at is scheduled", async () => {
  const f = await sendingFixture();
  await f.template("email", "later", { subject: "S", html: "H" });
  await f.contact({ external_id: "k" });
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const res = await f.post("/api/v1/messages/trigger", {
    recipient_type: "contact",
    contact_external_id: "k",
    channels: ["email"],
    template_key: "later",
    trigger_at: at,
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.scheduled_for, at);
  assert.equal(body.message, "scheduled successfully");
  assert.equal((await (await f.get(`/api/v1/triggers/${body.trigger_id}`)).json()).status, "pending");
});

dbTest("POST /messages/trigger keeps to the plan's channels per trigger and calls per minute", async () => {
  const f = await sendingFixture("free");
  await withTemplates(f);
  await f.contact({ external_id: "z" });
  const body = { recipient_type: "contact", contact_external_id: "z", template_key: "alert" };
  const three = await f.post("/api/v1/messages/trigger", { ...body, channels: ["email", "sms", "push"] }, f.keys.test);
  assert.equal(three.status, 400);
  assert.equal((await three.json()).message, "Your plan allows at most 2 channels per trigger");
  // The free plan allows 10 triggers a minute (the refused call above did not count).
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) {
    const res = await f.post("/api/v1/messages/trigger", { ...body, channels: ["email"] }, f.keys.test);
    statuses.push(res.status);
    if (res.status === 429) {
      assert.ok(Number(res.headers.get("retry-after")) >= 1);
      assert.equal((await res.json()).message, "Trigger rate limit exceeded: 10 per minute");
    } else await res.body?.cancel();
  }
  assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
});

dbTest("POST /messages/trigger checks the wallet for the contact's paid channels", async () => {
  const f = await sendingFixture();
  await withTemplates(f);
  await f.contact({ external_id: "w", custom_fields: { phone: "+14155550100" } });
  const res = await f.post("/api/v1/messages/trigger", {
    recipient_type: "contact",
    contact_external_id: "w",
    channels: ["sms", "whatsapp"],
    template_key: "alert",
  });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).message, "Insufficient wallet balance. Required: 0.0115, Available: 0");
});

dbTest(
  "POST /messages/trigger refuses fallback_channels it cannot honour, as the single-channel sends do",
  async () => {
    const f = await sendingFixture();
    await f.fund(1);
    await withTemplates(f);
    await f.template("email", "mail-only", { subject: "S", html: "H" });
    await f.template("push", "mail-only", { title: "T", body: "B" });
    await f.contact({ external_id: "known", custom_fields: { phone: "+14155550123" } });
    const send = triggerForContact(f, "known", "alert");
    const cases: [Record<string, unknown>, string][] = [
      [
        { channels: ["whatsapp", "email"], fallback_channels: ["email"] },
        "fallback_channels cannot name the send's own channel (email)",
      ],
      [
        { channels: ["whatsapp"], fallback_channels: ["fax"] },
        "Valid fallback channels are: email, sms, whatsapp, push",
      ],
      [{ channels: ["whatsapp"], fallback_channels: ["sms", "sms"] }, "fallback_channels names sms twice"],
      [
        { channels: ["email", "push"], template_key: "mail-only", fallback_channels: ["sms"] },
        "Template 'mail-only' not found for fallback channel sms",
      ],
      [{ channels: ["whatsapp"], fallback_after_minutes: 5 }, "fallback_after_minutes needs fallback_channels"],
      // The fallback backs up the first channel: WhatsApp second has none, so nothing waits for its report.
      [
        { channels: ["email", "whatsapp"], fallback_channels: ["sms"], fallback_after_minutes: 5 },
        "fallback_after_minutes needs a WhatsApp message followed by a fallback channel",
      ],
    ];
    for (const [body, message] of cases) {
      const res = await send(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.message, message);
      assert.match(res.body.details.field, /^fallback_/);
    }
    const accepted = await send({
      channels: ["whatsapp", "email"],
      fallback_channels: ["sms", "push"],
      fallback_after_minutes: 5,
    });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.deepEqual(accepted.body.channels_triggered, ["whatsapp", "email"]);
    assert.deepEqual(accepted.body.executions.map((e: { channel: string }) => e.channel), [
      "whatsapp",
      "email",
      "sms",
      "push",
    ]);
  },
);

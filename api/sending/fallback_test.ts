import assert from "node:assert/strict";
import { dbTest } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

/** A team with the template `order` on WhatsApp and SMS (approved) and a contact with a number. */
async function setup() {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("whatsapp", "order", { body: "Order {{n}}", category: "UTILITY" });
  await f.template("sms", "order", { body: "Order {{n}}" });
  await f.template("sms", "draft", { body: "Draft", status: "pending" });
  await f.template("whatsapp", "draft", { body: "Draft", category: "UTILITY" });
  const contact = await f.contact({
    external_id: `c-${crypto.randomUUID()}`,
    custom_fields: { phone: "+447700900401" },
  });
  const whatsapp = {
    template_key: "order",
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    conversation_category: "UTILITY",
  };
  return { f, contact, whatsapp };
}

dbTest("POST /whatsapp/send refuses fallback_channels it cannot honour, with a 400 naming the field", async () => {
  const { f, whatsapp } = await setup();
  const cases: [Record<string, unknown>, string][] = [
    [
      { recipient_type: "direct_whatsapp", direct_whatsapp: "+447700900402", fallback_channels: ["sms"] },
      "fallback_channels needs a send to contacts (recipient_type contact, tag, segment or all)",
    ],
    [{ fallback_channels: ["fax"] }, "Valid fallback channels are: email, sms, whatsapp, push"],
    [{ fallback_channels: ["whatsapp"] }, "fallback_channels cannot name the send's own channel (whatsapp)"],
    [{ fallback_channels: ["sms", "sms"] }, "fallback_channels names sms twice"],
    [{ fallback_channels: ["email"] }, "Template 'order' not found for fallback channel email"],
    [
      { template_key: "draft", fallback_channels: ["sms"] },
      "Template 'draft' is not approved for fallback channel sms",
    ],
    [{ fallback_after_minutes: 5 }, "fallback_after_minutes needs fallback_channels"],
    [
      { fallback_channels: ["sms"], fallback_after_minutes: 0 },
      "fallback_after_minutes must be more than 0 and at most 1440",
    ],
    [
      { fallback_channels: ["sms"], fallback_after_minutes: 1441 },
      "fallback_after_minutes must be more than 0 and at most 1440",
    ],
  ];
  for (const [body, message] of cases) {
    const res = await f.send("/api/v1/whatsapp/send", { ...whatsapp, ...body });
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.message, message);
    assert.match(res.body.details.field, /^fallback_/);
  }
});

dbTest(
  "fallback_after_minutes needs a WhatsApp message followed by a fallback; a raw email cannot fall back",
  async () => {
    const { f, contact } = await setup();
    await f.template("email", "order", { subject: "Order", html: "<p>Order</p>" });
    const sms = await f.send("/api/v1/sms/send", {
      template_key: "order",
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      fallback_channels: ["email"],
      fallback_after_minutes: 10,
    });
    assert.equal(sms.status, 400);
    assert.equal(sms.body.message, "fallback_after_minutes needs a WhatsApp message followed by a fallback channel");
    const smsThenWhatsApp = await f.send("/api/v1/sms/send", {
      template_key: "order",
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      fallback_channels: ["whatsapp", "email"],
      fallback_after_minutes: 10,
    });
    assert.equal(smsThenWhatsApp.status, 201, JSON.stringify(smsThenWhatsApp.body));
    const raw = await f.send("/api/v1/messages/send", {
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      subject: "Hi",
      content: "<p>Hi</p>",
      fallback_channels: ["sms"],
    });
    assert.equal(raw.status, 400);
    assert.equal(raw.body.message, "fallback_channels needs a template_key: each fallback channel sends that template");
  },
);

dbTest(
  "a send with fallback_channels shows one execution per channel, the fallbacks after the send's own",
  async () => {
    const { f, whatsapp } = await setup();
    const res = await f.post("/api/v1/whatsapp/send", { ...whatsapp, fallback_channels: ["sms"] });
    const { trigger_id, trigger } = await f.finished(res);
    assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
    const direct = await (await f.get(`/api/v1/triggers/${trigger_id}/direct`)).json();
    assert.deepEqual(
      direct.executions.map((e: { channel: string; execution: { status: string; total_contacts: number } }) => [
        e.channel,
        e.execution.status,
        e.execution.total_contacts,
      ]),
      [["whatsapp", "completed", 1], ["sms", "completed", 0]],
      "WhatsApp reached the contact: the SMS execution sent nothing",
    );
    const [stored] = await f.deps.sql`select spec from triggers where id = ${trigger_id}`;
    assert.deepEqual(stored.spec.executions.map((e: { content: { channel: string } }) => e.content.channel), [
      "whatsapp",
      "sms",
    ]);
    assert.equal(stored.spec.executions[1].fallback_for, stored.spec.executions[0].id);
  },
);

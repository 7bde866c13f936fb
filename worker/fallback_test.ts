import assert from "node:assert/strict";
import { dbTest } from "../shared/testing.ts";
import type { SendingFixture } from "./testing.ts";
import { createWorkerContext } from "./context.ts";
import { runJob } from "./queue.ts";
import type { FallbackJob } from "./fallback_job.ts";
import { executions, fallbackFixture, messages, REFUSED, twilioStatus } from "./fallback_testing.ts";

/** POST /whatsapp/send of the template `order` (UTILITY) to the contacts with `tags`. */
function whatsappToTag(f: SendingFixture, tags: string[], fields: Record<string, unknown>): Promise<Response> {
  return f.post("/api/v1/whatsapp/send", {
    template_key: "order",
    recipient_type: "tag",
    tag: tags,
    conversation_category: "UTILITY",
    ...fields,
  });
}

dbTest(
  "fallback from WhatsApp to SMS on failure: the SMS is sent and charged as SMS, as an execution of its own",
  async () => {
    const { f, requestsTo, close } = await fallbackFixture({ "whatsapp:+447700900101": REFUSED });
    try {
      const contact = await f.contact({ external_id: "ann", custom_fields: { phone: "+447700900101" } });
      const res = await f.post("/api/v1/whatsapp/send", {
        template_key: "order",
        recipient_type: "contact",
        contact_external_id: contact.external_id,
        conversation_category: "UTILITY",
        variables: { n: "42" },
        fallback_channels: ["sms"],
      });
      const { trigger_id, trigger } = await f.finished(res);
      assert.equal(trigger.status, "completed");
      assert.deepEqual(await executions(f, trigger_id), [
        ["whatsapp", "failed", 1, 0, 1, 0],
        ["sms", "completed", 1, 1, 0, 0],
      ]);
      assert.deepEqual(await messages(f, trigger_id), [
        ["sms", "+447700900101", "sent", 7_500],
        ["whatsapp", "+447700900101", "failed", 0],
      ]);
      assert.equal(requestsTo("whatsapp:+447700900101"), 1);
      assert.equal(requestsTo("+447700900101"), 1);
      // The WhatsApp message was refunded; the SMS is what the team paid for.
      assert.equal(await f.balance(), 1 - 0.0075);

      // The fallback job run again (a redelivery) sends nothing twice and counts nothing twice.
      const [sms] = await f.deps.sql<{ id: string }[]>`
      select id from executions where trigger_id = ${trigger_id} and channel = 'sms'`;
      const [wa] = await f.deps.sql<{ id: string }[]>`
      select id from executions where trigger_id = ${trigger_id} and channel = 'whatsapp'`;
      const again: FallbackJob = {
        type: "fallback",
        id: crypto.randomUUID(),
        trigger_id,
        execution_id: sms.id,
        batch_no: 0,
        from_execution_id: wa.id,
        from_batch_no: 0,
        reason: "failed",
        after: null,
        until: null,
        attempt: 0,
      };
      await runJob(createWorkerContext(f.deps), again);
      await runJob(createWorkerContext(f.deps), { ...again, batch_no: 1, reason: "undelivered" });
      assert.equal(requestsTo("+447700900101"), 1);
      assert.deepEqual((await f.waitForTrigger(trigger_id)).summary, {
        total_contacts: 2,
        sent: 1,
        failed: 1,
        filtered: 0,
      });
    } finally {
      await close();
    }
  },
);

dbTest("a fan-out falls back for the unreachable and the failed, never around a preference that is off", async () => {
  const { f, requestsTo, close } = await fallbackFixture({ "whatsapp:+447700900202": REFUSED });
  try {
    const tags = ["fb"];
    await f.contact({ tags, custom_fields: { phone: "+447700900201" } }); // WhatsApp delivers
    await f.contact({ tags, custom_fields: { phone: "+447700900202" } }); // WhatsApp refuses: SMS
    const noPhone = await f.contact({ tags, email: "nophone@example.com" }); // No number: email (SMS fails too)
    const optedOut = await f.contact({ tags, custom_fields: { phone: "+447700900204" } });
    await f.deps.sql`update contacts set preferences = jsonb_set(preferences, '{whatsapp}', '{"transactional": false}')
      where id = ${optedOut.id}`;
    const res = await whatsappToTag(f, tags, { variables: { n: "7" }, fallback_channels: ["sms", "email"] });
    const { trigger_id } = await f.finished(res);
    assert.deepEqual(await executions(f, trigger_id), [
      ["whatsapp", "completed", 4, 1, 2, 1],
      ["sms", "completed", 2, 1, 1, 0],
      ["email", "completed", 1, 1, 0, 0],
    ]);
    assert.deepEqual((await f.outbox(trigger_id)).map((m) => [m.channel, m.to_address, m.subject]), [
      ["email", noPhone.email, "Order 7"],
    ]);
    assert.equal(requestsTo("+447700900202"), 1, "the refused WhatsApp number got the SMS");
    assert.equal(requestsTo("+447700900201"), 0, "WhatsApp reached it: no SMS");
    assert.equal(requestsTo("+447700900204") + requestsTo("whatsapp:+447700900204"), 0, "opted out: nothing");
  } finally {
    await close();
  }
});

dbTest(
  "fallback from WhatsApp to SMS on a missing delivery report, and not when the report says delivered",
  async () => {
    const { f, requestsTo, close } = await fallbackFixture();
    try {
      const tags = ["report"];
      const reported = await f.contact({ tags, custom_fields: { phone: "+447700900301" } });
      await f.contact({ tags, custom_fields: { phone: "+447700900302" } });
      const res = await whatsappToTag(f, tags, {
        variables: { n: "9" },
        fallback_channels: ["sms"],
        fallback_after_minutes: 0.1,
      });
      const { trigger_id } = await res.json();
      // Twilio reports the first number's message delivered, through the status callback.
      let sid: string | undefined;
      for (let i = 0; i < 200 && !sid; i++) {
        const [row] = await f.deps.sql<{ provider_message_id: string | null }[]>`
        select provider_message_id from messages where trigger_id = ${trigger_id} and contact_id = ${reported.id}
          and status = 'sent'`;
        sid = row?.provider_message_id ?? undefined;
        if (!sid) await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(sid, "the WhatsApp message was sent");
      const status = await f.app.request(...twilioStatus({ MessageSid: sid!, MessageStatus: "delivered" }));
      assert.equal(status.status, 204);
      const trigger = await f.waitForTrigger(trigger_id);
      assert.equal(trigger.status, "completed");
      assert.deepEqual(await executions(f, trigger_id), [
        ["whatsapp", "completed", 2, 2, 0, 0],
        ["sms", "completed", 1, 1, 0, 0],
      ]);
      assert.equal(requestsTo("+447700900302"), 1, "no report within the time: SMS");
      assert.equal(requestsTo("+447700900301"), 0, "reported delivered: no SMS");
    } finally {
      await close();
    }
  },
);

dbTest("a push send to a contact without a device falls back to SMS", async () => {
  const { f, requestsTo, close } = await fallbackFixture();
  try {
    await f.template("push", "order", { title: "Order {{n}}", body: "Shipped" });
    const contact = await f.contact({
      external_id: `p-${crypto.randomUUID()}`,
      custom_fields: { phone: "+447700900501" },
    });
    const res = await f.post("/api/v1/push/send", {
      template_key: "order",
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      variables: { n: "5" },
      fallback_channels: ["sms"],
    });
    const { trigger_id } = await f.finished(res);
    assert.deepEqual(await executions(f, trigger_id), [
      ["push", "failed", 1, 0, 1, 0],
      ["sms", "completed", 1, 1, 0, 0],
    ]);
    assert.equal(requestsTo("+447700900501"), 1);
  } finally {
    await close();
  }
});

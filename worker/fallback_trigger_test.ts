import assert from "node:assert/strict";
import { dbTest } from "../shared/testing.ts";
import { executions, fallbackFixture, messages, REFUSED } from "./fallback_testing.ts";

dbTest(
  "a multi-channel trigger falls back from its first channel per contact; its other channels send as usual",
  async () => {
    const { f, requestsTo, close } = await fallbackFixture({ "whatsapp:+447700900602": REFUSED });
    try {
      const tags = ["multi"];
      const reached = await f.contact({ tags, custom_fields: { phone: "+447700900601" } }); // WhatsApp delivers
      const refused = await f.contact({ tags, custom_fields: { phone: "+447700900602" } }); // refused: SMS
      const noPhone = await f.contact({ tags }); // no number: neither WhatsApp nor SMS
      const res = await f.post("/api/v1/messages/trigger", {
        template_key: "order",
        recipient_type: "tag",
        tags,
        channels: ["whatsapp", "email"],
        variables: { n: "8" },
        fallback_channels: ["sms"],
      });
      const { trigger_id, trigger } = await f.finished(res, 200);
      assert.equal(trigger.status, "completed");
      // Each fallback shows as an execution of its channel.
      assert.deepEqual(await executions(f, trigger_id), [
        ["whatsapp", "completed", 3, 1, 2, 0],
        ["email", "completed", 3, 3, 0, 0],
        ["sms", "completed", 2, 1, 1, 0],
      ]);
      assert.equal(requestsTo("+447700900602"), 1, "the refused WhatsApp number got the SMS");
      assert.equal(requestsTo("+447700900601"), 0, "WhatsApp reached it: no SMS");
      // Every contact got the email, whatever WhatsApp did: the fallback backs up WhatsApp alone.
      assert.deepEqual(
        (await f.outbox(trigger_id)).filter((m) => m.channel === "email").map((m) => m.to_address).sort(),
        [reached.email, refused.email, noPhone.email].sort(),
      );
      // The SMS is charged as SMS; the refused and unreachable WhatsApp messages cost nothing.
      const sms = (await messages(f, trigger_id)).filter(([channel]) => channel === "sms");
      assert.deepEqual(sms, [["sms", "+447700900602", "sent", 7_500], ["sms", null, "failed", 0]]);
    } finally {
      await close();
    }
  },
);

dbTest("a multi-channel trigger to one contact without a push device falls back to SMS", async () => {
  const { f, requestsTo, close } = await fallbackFixture();
  try {
    await f.template("push", "order", { title: "Order {{n}}", body: "Shipped" });
    const contact = await f.contact({ external_id: `m-${crypto.randomUUID()}`, phone: "+447700900611" });
    const res = await f.post("/api/v1/messages/trigger", {
      template_key: "order",
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      channels: ["push", "email"],
      variables: { n: "3" },
      fallback_channels: ["sms"],
    });
    const { trigger_id, trigger } = await f.finished(res, 200);
    assert.equal(trigger.status, "completed");
    assert.deepEqual(await executions(f, trigger_id), [
      ["push", "failed", 1, 0, 1, 0],
      ["email", "completed", 1, 1, 0, 0],
      ["sms", "completed", 1, 1, 0, 0],
    ]);
    assert.equal(requestsTo("+447700900611"), 1);
  } finally {
    await close();
  }
});

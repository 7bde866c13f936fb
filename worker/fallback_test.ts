import assert from "node:assert/strict";
import twilio from "twilio";
import type { Deps } from "../shared/deps.ts";
import { hotStateDeps } from "../shared/deps.ts";
import { PgBossQueue } from "../shared/engine/pg_boss_queue.ts";
import { testQueueOptions } from "../shared/engine/pg_boss_testing.ts";
import { postgresHotState } from "../shared/engine/postgres/hot_state.ts";
import type { TwilioErrorBody } from "../harness/fakes/fake_servers.ts";
import { dbTest, onKv, testDeps } from "../shared/testing.ts";
import { twilioOnLoopback } from "./sms_testing.ts";
import { type SendingFixture, sendingFixtureOn, upsertIdentity } from "./testing.ts";
import { createWorkerContext } from "./context.ts";
import { runJob } from "./queue.ts";
import type { FallbackJob } from "./fallback_job.ts";

const TWILIO_TOKEN = "twilio-auth-token-for-fallback-tests";

/** WhatsApp refuses this kind of number for good (Twilio's 63016: outside the session window). */
const REFUSED: TwilioErrorBody = { status: 400, code: 63016, message: "Failed to send freeform message" };

/**
 * The service on an engine (and queue) of the test's own, its worker running, with SMS and WhatsApp
 * sent through Twilio's real SDK to a fake Twilio on loopback (`errors` by To), email and push to the
 * outbox; a team with sender numbers, templates under the key `order` on every channel, and money.
 */
async function fallbackFixture(errors: Record<string, TwilioErrorBody> = {}) {
  const base = await testDeps({ TWILIO_AUTH_TOKEN: TWILIO_TOKEN });
  const fake = twilioOnLoopback({ errors });
  const engine = await ownEngine(base);
  const deps: Deps = {
    ...engine.deps,
    providers: {
      outbox: base.providers.outbox,
      get: (channel, { sandbox }) =>
        !sandbox && (channel === "sms" || channel === "whatsapp") ? fake.provider : base.providers.outbox,
    },
  };
  const f = await sendingFixtureOn(deps);
  for (const channel of ["sms", "whatsapp"] as const) {
    await upsertIdentity(deps.sql, f.team.id, channel, "main", { from: "+15005550006", is_default: true });
  }
  await f.template("whatsapp", "order", { body: "Order {{n}} shipped", category: "UTILITY" });
  await f.template("sms", "order", { body: "SMS: order {{n}} shipped" });
  await f.template("email", "order", { subject: "Order {{n}}", html: "<p>Order {{n}} shipped</p>" });
  await f.fund(1);
  return {
    f,
    fake,
    /** Twilio requests to `to` ("whatsapp:+…" for WhatsApp). */
    requestsTo: fake.requestsTo,
    async close() {
      await fake.server.close();
      await engine.close();
    },
  };
}

/** The configured engine's hot state and a queue of the test's own, so that its worker has these deps. */
async function ownEngine(base: Deps): Promise<{ deps: Deps; close(): Promise<void> }> {
  if (base.config.ENGINE === "postgres") {
    const hot = postgresHotState(base.sql);
    const schema = `pgboss_fb_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const queue = await PgBossQueue.start<{ type: string }>(base.sql, testQueueOptions(schema, "jobs"));
    return {
      deps: { ...base, ...hotStateDeps(hot), queue },
      async close() {
        await queue.stop();
        await hot.close();
      },
    };
  }
  const kv = await Deno.openKv(":memory:");
  return { deps: onKv(base, kv), close: () => Promise.resolve(kv.close()) };
}

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

/** The trigger's executions as GET /triggers/{id}/direct lists them: channel, status and counts. */
async function executions(f: SendingFixture, triggerId: string) {
  const body = await (await f.get(`/api/v1/triggers/${triggerId}/direct`)).json();
  return body.executions.map((
    e: {
      channel: string;
      execution: {
        status: string;
        total_contacts: number;
        sent_count: number;
        failed_count: number;
        filtered_count: number;
      };
    },
  ) => [
    e.channel,
    e.execution.status,
    e.execution.total_contacts,
    e.execution.sent_count,
    e.execution.failed_count,
    e.execution.filtered_count,
  ]);
}

/** The trigger's messages: channel, contact, status, cost (micro-dollars), by channel then address. */
async function messages(f: SendingFixture, triggerId: string) {
  const rows = await f.deps.sql<{ channel: string; to_address: string | null; status: string; cost: number }[]>`
    select channel, to_address, status, cost_micros::int as cost from messages where trigger_id = ${triggerId}
    order by channel, to_address`;
  return rows.map((r) => [r.channel, r.to_address, r.status, r.cost]);
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

/** A Twilio status callback, signed as Twilio signs it. */
function twilioStatus(fields: Record<string, string>): [string, RequestInit] {
  const url = "http://localhost/api/v1/inbound/twilio/status";
  return [url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Twilio-Signature": twilio.getExpectedTwilioSignature(TWILIO_TOKEN, url, fields),
    },
    body: new URLSearchParams(fields).toString(),
  }];
}

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

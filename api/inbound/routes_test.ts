import assert from "node:assert/strict";
import twilio from "twilio";
import { ulid } from "ulid";
import { createService } from "../../main.ts";
import { createContact } from "../../shared/contacts/queries.ts";
import type { Deps } from "../../shared/deps.ts";
import { EVENT_SWEEP_AGE_MS, sweepEventOutbox } from "../../shared/event_outbox.ts";
import { metrics } from "../../shared/metrics.ts";
import { dbTest, onKv, randomEmail, testDeps, testTeam } from "../../shared/testing.ts";
import type { WebhookDeliverJob } from "../../shared/webhook_events.ts";
import { newWebhookSecret, signWebhook } from "../../shared/webhook_signing.ts";
import { stoppingBeforeWebhooks } from "../../worker/testing.ts";
import { twilioSignature } from "./twilio_signature.ts";

const TOKEN = "twilio-auth-token-for-tests";
const RESEND_SECRET = newWebhookSecret();

/** Deps whose KV queue only collects what is enqueued (the emitted webhook deliveries). */
async function setup() {
  const base = await testDeps({ TWILIO_AUTH_TOKEN: TOKEN, RESEND_WEBHOOK_SECRET: RESEND_SECRET });
  const kv = await Deno.openKv(":memory:");
  const jobs: WebhookDeliverJob[] = [];
  kv.listenQueue((message) => {
    jobs.push(message as WebhookDeliverJob);
  });
  const deps = onKv(base, kv);
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  // An endpoint receiving every event, so that emitted events reach the queue.
  await deps.sql`insert into webhook_endpoints ${
    deps.sql({ team_id: team.id, url: "https://93.184.216.34/hook", secret: newWebhookSecret() })
  }`;
  const events = async (count: number) => {
    const until = Date.now() + 5_000;
    while (jobs.flatMap((j) => j.deliveries).length < count && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await new Promise((r) => setTimeout(r, 50));
    return jobs.flatMap((j) => j.deliveries.map((d) => d.event));
  };
  return { deps, app, team, keys, events, close: () => kv.close() };
}

/** A form POST signed as Twilio signs it (the SDK's own signature function). */
function twilioRequest(path: string, fields: Record<string, string>, token = TOKEN): [string, RequestInit] {
  const url = `http://localhost${path}`;
  const signature = twilio.getExpectedTwilioSignature(token, url, fields);
  return [url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": signature },
    body: new URLSearchParams(fields).toString(),
  }];
}

async function smsPreferences(deps: Deps, contactId: string) {
  const [row] = await deps.sql`select preferences -> 'sms' as sms from contacts where id = ${contactId}`;
  return row.sms;
}

async function insertMessage(deps: Deps, teamId: string, channel: string, providerId: string, contactId?: string) {
  const row = {
    id: ulid(),
    team_id: teamId,
    trigger_id: crypto.randomUUID(),
    execution_id: crypto.randomUUID(),
    channel,
    recipient: contactId ?? "+14155550100",
    to_address: "+14155550100",
    contact_id: contactId ?? null,
    status: "sent",
    provider: channel === "email" ? "resend" : "twilio",
    provider_message_id: providerId,
  };
  await deps.sql`insert into messages ${deps.sql(row)}`;
  return row;
}

Deno.test("twilioSignature() matches the Twilio SDK, repeated parameters included", async () => {
  const params = new URLSearchParams([["To", "+1800"], ["Body", "hi there"], ["Media", "b"], ["Media", "a"]]);
  const url = "https://example.com/api/v1/inbound/twilio/sms?team_id=x";
  const sdk = twilio.getExpectedTwilioSignature(TOKEN, url, { To: "+1800", Body: "hi there", Media: ["b", "a"] });
  assert.equal(await twilioSignature(TOKEN, url, params), sdk);
});

dbTest(
  "Twilio STOP opts the contact out of SMS and emits contact.unsubscribed; START opts back in to all but marketing",
  async () => {
    const s = await setup();
    try {
      const contact = await createContact(s.deps.sql, s.team.id, {
        email: randomEmail(),
        custom_fields: { phone: "+1 (415) 555-0100" },
      });
      const path = `/api/v1/inbound/twilio/sms?team_id=${s.team.id}`;
      const fields = { From: "+14155550100", To: "+15005550006", Body: " stop ", MessageSid: "SM1" };
      const res = await s.app.request(...twilioRequest(path, fields));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), "text/xml");
      assert.match(await res.text(), /<Response><\/Response>/);
      assert.deepEqual(await smsPreferences(s.deps, contact.id), { transactional: false, promotional: false });
      const [event] = await s.events(1);
      assert.equal(event.type, "contact.unsubscribed");
      assert.deepEqual(event.data, {
        contact_id: contact.id,
        external_id: contact.external_id,
        channel: "sms",
        categories: ["transactional", "promotional"],
        source: "twilio",
        keyword: "STOP",
      });

      // A second STOP changes nothing and emits nothing.
      assert.equal((await s.app.request(...twilioRequest(path, { ...fields, Body: "QUIT" }))).status, 200);
      assert.equal((await s.events(2)).length, 1);

      const start = await s.app.request(...twilioRequest(path, { ...fields, Body: "Start" }));
      assert.equal(start.status, 200);
      // A START is no consent to marketing: promotional stays off until the contact opts in again.
      assert.deepEqual(await smsPreferences(s.deps, contact.id), { transactional: true, promotional: false });
      // A repeated START changes nothing.
      assert.equal((await s.app.request(...twilioRequest(path, { ...fields, Body: "UNSTOP" }))).status, 200);
      assert.deepEqual(await smsPreferences(s.deps, contact.id), { transactional: true, promotional: false });
    } finally {
      s.close();
    }
  },
);

dbTest("every STOP word opts out; other text changes nothing", async () => {
  const s = await setup();
  try {
    const path = `/api/v1/inbound/twilio/sms?team_id=${s.team.id}`;
    for (const word of ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"]) {
      const phone = `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
      const contact = await createContact(s.deps.sql, s.team.id, { email: randomEmail(), custom_fields: { phone } });
      await s.app.request(...twilioRequest(path, { From: phone, Body: "please stop texting me" }));
      assert.equal((await smsPreferences(s.deps, contact.id)).promotional, true, word);
      await s.app.request(...twilioRequest(path, { From: phone, Body: word.toLowerCase() }));
      assert.deepEqual(await smsPreferences(s.deps, contact.id), { transactional: false, promotional: false }, word);
      await s.app.request(...twilioRequest(path, { From: phone, Body: "UNSTOP" }));
      assert.equal((await smsPreferences(s.deps, contact.id)).transactional, true, word);
    }
  } finally {
    s.close();
  }
});

dbTest("Twilio SMS with a wrong signature is 403 and changes nothing; no API key is needed", async () => {
  const s = await setup();
  try {
    const contact = await createContact(s.deps.sql, s.team.id, {
      email: randomEmail(),
      custom_fields: { phone: "+14155550199" },
    });
    const path = `/api/v1/inbound/twilio/sms?team_id=${s.team.id}`;
    const before = metrics.inbound.get({ provider: "twilio", kind: "sms", outcome: "forbidden" });
    const forged = await s.app.request(...twilioRequest(path, { From: "+14155550199", Body: "STOP" }, "wrong-token"));
    assert.equal(forged.status, 403);
    assert.deepEqual(await forged.json(), {
      statusCode: 403,
      message: "Invalid Twilio signature",
      error: "Forbidden",
      code: "invalid_signature",
    });
    // Signed for another team's URL, replayed with this team's id.
    const [, init] = twilioRequest(`/api/v1/inbound/twilio/sms?team_id=${crypto.randomUUID()}`, {
      From: "+14155550199",
      Body: "STOP",
    });
    assert.equal((await s.app.request(`http://localhost${path}`, init)).status, 403);
    const unsigned = await s.app.request(`http://localhost${path}`, {
      method: "POST",
      body: "From=%2B14155550199&Body=STOP",
    });
    assert.equal(unsigned.status, 403);
    assert.equal(metrics.inbound.get({ provider: "twilio", kind: "sms", outcome: "forbidden" }), before + 3);
    assert.deepEqual(await smsPreferences(s.deps, contact.id), { transactional: true, promotional: true });
  } finally {
    s.close();
  }
});

dbTest("Twilio STOP touches only the team in the URL, and a missing team_id is 400", async () => {
  const s = await setup();
  try {
    const other = await testTeam(s.deps);
    const theirs = await createContact(s.deps.sql, other.team.id, {
      email: randomEmail(),
      custom_fields: { phone: "+14155550123" },
    });
    const path = `/api/v1/inbound/twilio/sms?team_id=${s.team.id}`;
    assert.equal((await s.app.request(...twilioRequest(path, { From: "+14155550123", Body: "STOP" }))).status, 200);
    assert.deepEqual(await smsPreferences(s.deps, theirs.id), { transactional: true, promotional: true });
    const missing = await s.app.request(...twilioRequest("/api/v1/inbound/twilio/sms", { From: "+1", Body: "STOP" }));
    assert.equal(missing.status, 400);
  } finally {
    s.close();
  }
});

dbTest("Twilio status callbacks record delivered then read, emit message.delivered and message.read", async () => {
  const s = await setup();
  try {
    const message = await insertMessage(s.deps, s.team.id, "whatsapp", `SM${crypto.randomUUID().slice(0, 8)}`);
    const path = "/api/v1/inbound/twilio/status";
    const send = (status: string) =>
      s.app.request(...twilioRequest(path, { MessageSid: message.provider_message_id, MessageStatus: status }));
    assert.equal((await send("sent")).status, 204);
    assert.equal((await send("delivered")).status, 204);
    assert.equal((await send("delivered")).status, 204);
    assert.equal((await send("read")).status, 204);
    assert.equal((await send("failed")).status, 204);
    const [row] = await s.deps.sql`
      select status, delivery_status, delivered_at, read_at from messages where id = ${message.id}`;
    assert.equal(row.status, "sent");
    assert.equal(row.delivery_status, "read");
    assert.ok(row.delivered_at && row.read_at);
    const events = await s.events(2);
    assert.deepEqual(events.map((e) => e.type), ["message.delivered", "message.read"]);
    assert.deepEqual(events[0].data, {
      execution_id: message.execution_id,
      message_id: message.id,
      status: "delivered",
      trigger_id: message.trigger_id,
      channel: "whatsapp",
    });

    const forged = await s.app.request(
      ...twilioRequest(path, { MessageSid: message.provider_message_id, MessageStatus: "failed" }, "nope"),
    );
    assert.equal(forged.status, 403);
  } finally {
    s.close();
  }
});

dbTest("Twilio failed status records the error and emits message.failed", async () => {
  const s = await setup();
  try {
    const message = await insertMessage(s.deps, s.team.id, "sms", `SM${crypto.randomUUID().slice(0, 8)}`);
    const fields = { MessageSid: message.provider_message_id, MessageStatus: "undelivered", ErrorCode: "30005" };
    assert.equal((await s.app.request(...twilioRequest("/api/v1/inbound/twilio/status", fields))).status, 204);
    const [row] = await s.deps.sql`select delivery_status, error from messages where id = ${message.id}`;
    assert.deepEqual({ ...row }, { delivery_status: "failed", error: "Twilio error 30005" });
    const [event] = await s.events(1);
    assert.equal(event.type, "message.failed");
    assert.equal(event.data.status, "failed");
  } finally {
    s.close();
  }
});

/** A Resend webhook request, signed as Svix signs it. */
async function resendRequest(payload: unknown, secret = RESEND_SECRET, at = Date.now()): Promise<RequestInit> {
  const body = JSON.stringify(payload);
  const id = `msg_${crypto.randomUUID()}`;
  const timestamp = Math.floor(at / 1000);
  return {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "svix-id": id,
      "svix-timestamp": String(timestamp),
      "svix-signature": await signWebhook(secret, id, timestamp, body),
    },
    body,
  };
}

dbTest("Resend email.delivered is recorded and emits message.delivered; bad or stale signatures are 403", async () => {
  const s = await setup();
  try {
    const emailId = crypto.randomUUID();
    const message = await insertMessage(s.deps, s.team.id, "email", emailId);
    const payload = { type: "email.delivered", created_at: new Date().toISOString(), data: { email_id: emailId } };
    const wrong = await s.app.request("/api/v1/inbound/resend", await resendRequest(payload, newWebhookSecret()));
    assert.equal(wrong.status, 403);
    assert.equal((await wrong.json()).message, "Invalid Resend signature");
    const stale = await s.app.request(
      "/api/v1/inbound/resend",
      await resendRequest(payload, RESEND_SECRET, Date.now() - 600_000),
    );
    assert.equal(stale.status, 403);
    const [before] = await s.deps.sql`select delivery_status from messages where id = ${message.id}`;
    assert.equal(before.delivery_status, null);

    const ok = await s.app.request("/api/v1/inbound/resend", await resendRequest(payload));
    assert.equal(ok.status, 204);
    const [row] = await s.deps.sql`select delivery_status, delivered_at from messages where id = ${message.id}`;
    assert.equal(row.delivery_status, "delivered");
    assert.ok(row.delivered_at);
    const [event] = await s.events(1);
    assert.equal(event.type, "message.delivered");
    assert.deepEqual(
      { execution_id: event.data.execution_id, message_id: event.data.message_id, status: event.data.status },
      { execution_id: message.execution_id, message_id: message.id, status: "delivered" },
    );
  } finally {
    s.close();
  }
});

dbTest(
  "Resend email.bounced fails the message; email.complained turns off the contact's promotional email",
  async () => {
    const s = await setup();
    try {
      const contact = await createContact(s.deps.sql, s.team.id, { email: randomEmail() });
      const bounced = await insertMessage(s.deps, s.team.id, "email", crypto.randomUUID());
      const complained = await insertMessage(s.deps, s.team.id, "email", crypto.randomUUID(), contact.id);
      await s.deps.sql`update contacts set preferences = jsonb_set(preferences, '{email,promotional}', 'true')
      where id = ${contact.id}`;
      const bounce = {
        type: "email.bounced",
        data: { email_id: bounced.provider_message_id, bounce: { message: "Mailbox does not exist" } },
      };
      assert.equal((await s.app.request("/api/v1/inbound/resend", await resendRequest(bounce))).status, 204);
      const complaint = { type: "email.complained", data: { email_id: complained.provider_message_id } };
      assert.equal((await s.app.request("/api/v1/inbound/resend", await resendRequest(complaint))).status, 204);

      const [b] = await s.deps.sql`select delivery_status, error from messages where id = ${bounced.id}`;
      assert.deepEqual({ ...b }, { delivery_status: "failed", error: "Mailbox does not exist" });
      const [p] = await s.deps.sql`select preferences -> 'email' as email from contacts where id = ${contact.id}`;
      assert.deepEqual(p.email, { transactional: true, promotional: false });
      const events = await s.events(2);
      assert.deepEqual(events.map((e) => e.type).sort(), ["contact.unsubscribed", "message.failed"]);
    } finally {
      s.close();
    }
  },
);

dbTest(
  "a provider's report is recorded with its event staged: a stop before the relay leaves it to the sweep",
  async () => {
    const s = await setup();
    try {
      const message = await insertMessage(s.deps, s.team.id, "sms", `SM${crypto.randomUUID().slice(0, 8)}`);
      // The service records the report, then stops before it hands the event over.
      const stopped = createService(stoppingBeforeWebhooks(s.deps));
      const path = "/api/v1/inbound/twilio/status";
      const res = await stopped.request(
        ...twilioRequest(path, { MessageSid: message.provider_message_id, MessageStatus: "delivered" }),
      );
      assert.equal(res.status, 204);
      const [row] = await s.deps.sql`select delivery_status from messages where id = ${message.id}`;
      assert.equal(row.delivery_status, "delivered");
      const staged = await s.deps.sql`select id, type from webhook_event_outbox where team_id = ${s.team.id}`;
      assert.deepEqual(staged.map((e) => e.type), ["message.delivered"]);
      assert.equal(await sweepEventOutbox({ ...s.deps, now: () => Date.now() + EVENT_SWEEP_AGE_MS }), 1);
      const [event] = await s.events(1);
      assert.equal(event.id, staged[0].id);
      assert.equal(event.data.message_id, message.id);
    } finally {
      s.close();
    }
  },
);

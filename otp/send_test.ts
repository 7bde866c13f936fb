import assert from "node:assert/strict";
import { uuidV7Time } from "../shared/sending/ids.ts";
import { dbTest, jsonRequest, randomEmail } from "../shared/testing.ts";
import { openSandbox, otpWorld, randomPhone, sandboxSend } from "./testing.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface OutboxMessage {
  channel: string;
  to_address: string;
  subject: string | null;
  body: string;
  trigger_id: string;
}

dbTest("a sandbox send answers 200 with every field, the codes, and sends and charges nothing", async () => {
  const now = Date.UTC(2030, 5, 1, 8, 0, 0);
  const world = await otpWorld({ now: () => now });
  const email = randomEmail("otp");
  const sms = randomPhone();
  const res = await world.post("/send", {
    channels: ["email", "sms"],
    recipients: { email, sms },
    sandbox_mode: true,
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(Object.keys(body).sort(), [
    "channels_results",
    "channels_sent",
    "data",
    "expires_at",
    "sandbox_otps",
    "session_id",
    "session_token",
    "success",
    "token",
    "verification_mode",
  ]);
  assert.equal(body.success, true);
  assert.match(body.session_id, UUID);
  // Time-ordered (v7), from the session's clock: see sendOtp.
  assert.equal(uuidV7Time(body.session_id), Date.parse("2030-06-01T08:00:00.000Z"));
  assert.equal(body.token, body.session_token);
  assert.equal(body.expires_at, "2030-06-01T08:10:00.000Z");
  assert.equal(body.verification_mode, "any");
  assert.match(body.sandbox_otps.email, /^\d{6}$/);
  assert.match(body.sandbox_otps.sms, /^\d{6}$/);
  for (const channel of ["email", "sms"]) {
    assert.equal(body.channels_sent[channel].success, true);
    assert.equal(typeof body.channels_sent[channel].message_id, "string");
    const result = body.channels_results[channel];
    assert.equal(result.success, true);
    assert.match(result.trigger_id, UUID);
    assert.match(result.execution_id, UUID);
    assert.equal(result.used_custom_template, false);
  }
  assert.deepEqual(body.data, {
    session_id: body.session_id,
    session_token: body.session_token,
    expires_at: body.expires_at,
    channels: ["email", "sms"],
    recipients: { email, sms },
    otps: body.sandbox_otps,
  });
  const outbox = await world.deps.sql`select id from outbox_all where team_id = ${world.team.id}`;
  assert.equal(outbox.length, 0);
  const charges = await world.deps
    .sql`select id from wallet_ledger where team_id = ${world.team.id} and kind = 'charge'`;
  assert.equal(charges.length, 0);
});

dbTest("a live send delivers a code per channel on the built-in templates and answers no codes", async () => {
  const world = await otpWorld();
  const recipients = { email: randomEmail("otp"), sms: randomPhone(), whatsapp: randomPhone() };
  const res = await world.post("/send", { channels: ["whatsapp", "email", "sms"], recipients });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.sandbox_otps, undefined);
  assert.equal(body.data.otps, undefined);
  assert.deepEqual(body.data.channels, ["email", "sms", "whatsapp"]);
  const outbox = await world.deps.sql<OutboxMessage[]>`
    select channel, to_address, subject, body, trigger_id from outbox_all where team_id = ${world.team.id} order by channel`;
  assert.deepEqual(outbox.map((m) => [m.channel, m.to_address]), [
    ["email", recipients.email],
    ["sms", recipients.sms],
    ["whatsapp", recipients.whatsapp],
  ]);
  for (const message of outbox) {
    assert.match(message.body, /\b\d{6}\b/);
    assert.match(message.body, /10 minutes/);
    assert.equal(message.trigger_id, body.channels_results[message.channel].trigger_id);
    assert.equal(body.channels_sent[message.channel].success, true);
  }
  assert.equal(outbox[0].subject, "Your verification code");

  // The code delivered verifies.
  const code = outbox[1].body.match(/\b(\d{6})\b/)![1];
  const verify = await world.post("/verify", { session_token: body.session_token, otps: { sms: code } });
  assert.equal(verify.status, 200);
});

dbTest("a test key sends to the outbox only and charges nothing", async () => {
  const world = await otpWorld();
  const res = await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone() } }, {
    key: world.keys.test,
  });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).sandbox_otps, undefined);
  const outbox = await world.deps.sql`select id from outbox_all where team_id = ${world.team.id}`;
  assert.equal(outbox.length, 1);
  const charges = await world.deps
    .sql`select id from wallet_ledger where team_id = ${world.team.id} and kind = 'charge'`;
  assert.equal(charges.length, 0);
});

dbTest("config sets the code length (4 to 8), expiry and the attempts", async () => {
  const now = Date.UTC(2030, 0, 1);
  const world = await otpWorld({ now: () => now });
  for (const length of [4, 8]) {
    const { otps } = await openSandbox(world, ["email"], { config: { otp_length: length } });
    assert.match(otps.email, new RegExp(`^\\d{${length}}$`));
  }
  const { token, body } = await openSandbox(world, ["email"], { config: { expiry_minutes: 30, max_attempts: 5 } });
  assert.equal(body.expires_at, "2030-01-01T00:30:00.000Z");
  const res = await world.post("/verify", { session_token: token, otps: { email: "x" } });
  assert.equal((await res.json()).attempts_remaining, 4);
});

dbTest("send rejects bad channels, bad or missing recipients and bad config with 400", async () => {
  const world = await otpWorld();
  const cases: [Record<string, unknown>, string][] = [
    [{ recipients: { email: randomEmail() } }, "channels should not be empty"],
    [{ channels: [], recipients: { email: randomEmail() } }, "channels must contain at least 1 elements"],
    [{ channels: ["fax"], recipients: { email: randomEmail() } }, "Valid channels are: email, sms, whatsapp"],
    [{ channels: ["push"], recipients: {} }, "Valid channels are: email, sms, whatsapp"],
    [{ channels: ["email"] }, "recipients should not be empty"],
    [{ channels: ["email"], recipients: {} }, "recipients.email is required when the email channel is listed"],
    [{ channels: ["email"], recipients: { email: "nope" } }, "recipients.email must be a valid email address"],
    [{ channels: ["sms"], recipients: { sms: "0612345678" } }, "recipients.sms must be in E.164 format"],
    [{ channels: ["whatsapp"], recipients: { whatsapp: "+1 415" } }, "recipients.whatsapp must be in E.164 format"],
    [
      { channels: ["sms", "whatsapp"], recipients: { sms: randomPhone() } },
      "recipients.whatsapp is required when the whatsapp channel is listed",
    ],
    [{ ...sandboxSend(["email"]), config: { otp_length: 3 } }, "config.otp_length must not be less than 4"],
    [{ ...sandboxSend(["email"]), config: { otp_length: 9 } }, "config.otp_length must not be greater than 8"],
    [{ ...sandboxSend(["email"]), config: { max_attempts: 0 } }, "config.max_attempts must not be less than 1"],
    [{ ...sandboxSend(["email"]), verification_mode: "some" }, "verification_mode must be one of: any, all"],
  ];
  for (const [body, message] of cases) {
    const res = await world.post("/send", body);
    assert.equal(res.status, 400, JSON.stringify(body));
    const answer = await res.json();
    assert.ok(answer.message.includes(message), `${JSON.stringify(answer.message)} should include ${message}`);
  }
});

dbTest("a recipient of an unlisted channel is ignored", async () => {
  const world = await otpWorld();
  const res = await world.post("/send", sandboxSend(["email"]));
  const body = await res.json();
  assert.deepEqual(Object.keys(body.data.recipients), ["email"]);
  assert.deepEqual(Object.keys(body.sandbox_otps), ["email"]);
});

dbTest("an Idempotency-Key replays the first send instead of opening a second session", async () => {
  const world = await otpWorld();
  const body = { channels: ["sms"], recipients: { sms: randomPhone() } };
  const headers = { "X-API-Key": world.keys.live, "X-Forwarded-For": world.ip, "Idempotency-Key": crypto.randomUUID() };
  const first = await world.app.request("/api/v1/otp/send", jsonRequest("POST", body, headers));
  const again = await world.app.request("/api/v1/otp/send", jsonRequest("POST", body, headers));
  assert.equal(again.status, 200);
  assert.equal(again.headers.get("idempotent-replayed"), "true");
  assert.equal((await again.json()).session_id, (await first.json()).session_id);
  const outbox = await world.deps.sql`select id from outbox_all where team_id = ${world.team.id}`;
  assert.equal(outbox.length, 1);
});

dbTest("the OTP endpoints are in the OpenAPI document", async () => {
  const world = await otpWorld();
  const doc = await (await world.app.request("/api/v1/openapi.json")).json();
  for (const path of ["/api/v1/otp/send", "/api/v1/otp/verify", "/api/v1/otp/resend"]) {
    assert.ok(doc.paths[path]?.post, path);
  }
});

dbTest("send with a NUL in metadata or a name is 400 'Text must not contain NUL …' and opens no session", async () => {
  const world = await otpWorld();
  for (const extra of [{ metadata: { note: "a\u0000b" } }, { first_name: "A\u0000" }]) {
    const res = await world.post("/send", {
      channels: ["email"],
      recipients: { email: "nul@example.com" },
      sandbox_mode: true,
      ...extra,
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.message, "Text must not contain NUL (U+0000) characters or unpaired surrogates");
    assert.equal(body.code, "invalid_characters");
  }
});

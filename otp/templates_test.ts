import assert from "node:assert/strict";
import { upsertIdentity } from "../shared/identities.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { dbTest, randomEmail } from "../shared/testing.ts";
import { type OtpWorld, otpWorld, randomPhone } from "./testing.ts";

interface OutboxMessage {
  channel: string;
  to_address: string;
  subject: string | null;
  body: string;
}

async function outbox(world: OtpWorld): Promise<OutboxMessage[]> {
  return await world.deps.sql<OutboxMessage[]>`
    select channel, to_address, subject, body from outbox_all where team_id = ${world.team.id} order by created_at, channel`;
}

function byChannel(messages: OutboxMessage[]): Record<string, OutboxMessage> {
  return Object.fromEntries(messages.map((m) => [m.channel, m]));
}

/** Keeps only an SMS identity serving the given countries. */
async function smsIdentityFor(world: OtpWorld, countries: string[]): Promise<void> {
  await world.deps.sql`delete from sender_identities where team_id = ${world.team.id} and channel = 'sms'`;
  await upsertIdentity(world.deps.sql, world.team.id, "sms", "uk-sender", {
    from: "ACME",
    countries,
    is_default: true,
  });
}

dbTest("an approved custom template under the reserved key is used with code, expiry and names", async () => {
  const world = await otpWorld();
  const db = world.deps.sql;
  await upsertTemplate(db, world.team.id, "email", "verify-api-otp-email", {
    subject: "{{first_name}}, your ACME code",
    html: "<p>Hi {{first_name}} {{last_name}}: {{otp_code}} (valid {{expiry_minutes}} min)</p>",
  });
  await upsertTemplate(db, world.team.id, "sms", "verify-api-otp-sms", {
    body: "ACME code {{otp_code}}, {{expiry_minutes}} min",
  });
  await upsertTemplate(db, world.team.id, "whatsapp", "verify_api_otp_whatsapp", {
    body: "*{{1}}* is your ACME code. Expires in {{2}} minutes.",
    category: "AUTHENTICATION",
  });
  await upsertIdentity(db, world.team.id, "email", "acme", {
    from: "security@acme.test",
    name: "ACME",
    is_default: true,
  });
  const recipients = { email: randomEmail(), sms: randomPhone(), whatsapp: randomPhone() };
  const res = await world.post("/send", {
    channels: ["email", "sms", "whatsapp"],
    recipients,
    first_name: "Ada",
    last_name: "Lovelace",
    config: { expiry_minutes: 5 },
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  for (const channel of ["email", "sms", "whatsapp"]) {
    assert.equal(body.channels_results[channel].used_custom_template, true, channel);
  }
  const { email, sms, whatsapp } = byChannel(await outbox(world));
  assert.equal(email.subject, "Ada, your ACME code");
  assert.match(email.body, /^<p>Hi Ada Lovelace: \d{6} \(valid 5 min\)<\/p>$/);
  assert.match(sms.body, /^ACME code \d{6}, 5 min$/);
  assert.match(whatsapp.body, /^\*\d{6}\* is your ACME code\. Expires in 5 minutes\.$/);
});

dbTest("a custom template over a million characters once filled gives way to the built-in one", async () => {
  const world = await otpWorld();
  // 6,000 × a 200-character name: 1.2 million characters, which would be sent cut short.
  await upsertTemplate(world.deps.sql, world.team.id, "sms", "verify-api-otp-sms", {
    body: "{{first_name}}".repeat(6_000) + " {{otp_code}} {{expiry_minutes}}",
  });
  const res = await world.post("/send", {
    channels: ["sms"],
    recipients: { sms: randomPhone() },
    first_name: "N".repeat(200),
  });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).channels_results.sms.used_custom_template, false);
  const [sms] = await outbox(world);
  assert.ok(!sms.body.includes("NNN"), sms.body.slice(0, 80));
  assert.match(sms.body, /\d{6}/);
});

dbTest("without a usable custom template the built-in one is used silently", async () => {
  const world = await otpWorld();
  const db = world.deps.sql;
  // Pending, missing {{expiry_minutes}}, and a key in the wrong case: none of them is usable.
  await upsertTemplate(db, world.team.id, "email", "verify-api-otp-email", {
    subject: "Code",
    html: "{{otp_code}} {{expiry_minutes}}",
    status: "pending",
  });
  await upsertTemplate(db, world.team.id, "sms", "verify-api-otp-sms", { body: "Code {{otp_code}}" });
  await upsertTemplate(db, world.team.id, "whatsapp", "Verify_Api_Otp_Whatsapp", {
    body: "{{otp_code}} {{expiry_minutes}}",
  });
  const res = await world.post("/send", {
    channels: ["email", "sms", "whatsapp"],
    recipients: { email: randomEmail(), sms: randomPhone(), whatsapp: randomPhone() },
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  for (const channel of ["email", "sms", "whatsapp"]) {
    assert.equal(body.channels_results[channel].used_custom_template, false, channel);
    assert.equal(body.channels_sent[channel].success, true, channel);
  }
  const { email, sms, whatsapp } = byChannel(await outbox(world));
  assert.equal(email.subject, "Your verification code");
  assert.match(sms.body, /^Your verification code is \d{6}\. It expires in 10 minutes\.$/);
  assert.match(whatsapp.body, /^\d{6} is your verification code\./);
});

dbTest("a custom SMS template needs an identity serving the recipient's country", async () => {
  const world = await otpWorld();
  await upsertTemplate(world.deps.sql, world.team.id, "sms", "verify-api-otp-sms", {
    body: "ACME {{otp_code}} / {{expiry_minutes}}",
  });
  await smsIdentityFor(world, ["GB"]);
  const uk = await (await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone("+4479") } }))
    .json();
  assert.equal(uk.channels_results.sms.used_custom_template, true);
  const us = await (await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone("+1415") } }))
    .json();
  assert.equal(us.channels_results.sms.used_custom_template, false);
  const [first, second] = await outbox(world);
  assert.match(first.body, /^ACME \d{6} \/ 10$/);
  assert.match(second.body, /^Your verification code is/);
});

dbTest("country variations of a custom SMS template serve only their countries", async () => {
  const world = await otpWorld();
  await upsertTemplate(world.deps.sql, world.team.id, "sms", "verify-api-otp-sms", {
    body: "unused",
    country_variations: { FR: "Votre code {{otp_code}} ({{expiry_minutes}} min)" },
  });
  const fr = await (await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone("+336") } })).json();
  assert.equal(fr.channels_results.sms.used_custom_template, true);
  const de = await (await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone("+4915") } }))
    .json();
  assert.equal(de.channels_results.sms.used_custom_template, false);
  const [first] = await outbox(world);
  assert.match(first.body, /^Votre code \d{6} \(10 min\)$/);
});

dbTest("a sandbox send reports the template it would use without sending", async () => {
  const world = await otpWorld();
  await upsertTemplate(world.deps.sql, world.team.id, "email", "verify-api-otp-email", {
    subject: "s",
    html: "{{otp_code}} {{expiry_minutes}}",
  });
  const res = await world.post("/send", {
    channels: ["email", "sms"],
    recipients: { email: randomEmail(), sms: randomPhone() },
    sandbox_mode: true,
  });
  const body = await res.json();
  assert.equal(body.channels_results.email.used_custom_template, true);
  assert.equal(body.channels_results.sms.used_custom_template, false);
  assert.equal((await outbox(world)).length, 0);
});

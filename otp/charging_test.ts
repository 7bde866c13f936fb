import assert from "node:assert/strict";
import { createService } from "../main.ts";
import { toMicros } from "../shared/money.ts";
import type { Providers } from "../shared/providers/registry.ts";
import { ProviderError } from "../shared/providers/types.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { dbTest, jsonRequest, randomEmail } from "../shared/testing.ts";
import { balanceMicros } from "../shared/wallet.ts";
import { type OtpWorld, otpWorld, randomPhone } from "./testing.ts";

const PRICES = {
  PRICE_OTP_VERIFICATION: 0.005,
  PRICE_SMS_SEGMENT: 0.0075,
  PRICE_WHATSAPP_AUTHENTICATION: 0.0035,
  PRICE_EMAIL: 0.0001,
};
/** Fee + email + one SMS segment + WhatsApp authentication. */
const ALL_CHANNELS = toMicros(0.005 + 0.0001 + 0.0075 + 0.0035);

interface Entry {
  kind: string;
  amount_micros: number;
  reference: string;
}

async function entries(world: OtpWorld): Promise<Entry[]> {
  return [
    ...await world.deps.sql<Entry[]>`
    select kind, amount_micros, reference from wallet_ledger
    where team_id = ${world.team.id} and kind <> 'topup' order by id`,
  ];
}

const spent = (list: Entry[]) => -list.reduce((sum, e) => sum + e.amount_micros, 0);

function threeChannels() {
  return {
    channels: ["email", "sms", "whatsapp"],
    recipients: { email: randomEmail(), sms: randomPhone(), whatsapp: randomPhone() },
  };
}

async function customTemplates(world: OtpWorld): Promise<void> {
  const db = world.deps.sql;
  await upsertTemplate(db, world.team.id, "email", "verify-api-otp-email", {
    subject: "Code",
    html: "{{otp_code}} for {{expiry_minutes}} minutes",
  });
  await upsertTemplate(db, world.team.id, "sms", "verify-api-otp-sms", {
    body: "{{otp_code}} ({{expiry_minutes}} min)",
  });
  await upsertTemplate(db, world.team.id, "whatsapp", "verify_api_otp_whatsapp", { body: "{{1}} {{2}}" });
}

dbTest("built-in templates: the fee and every delivery are charged up front, in one entry", async () => {
  const world = await otpWorld({ config: PRICES, balance: 1 });
  const res = await world.post("/send", threeChannels());
  assert.equal(res.status, 200);
  const list = await entries(world);
  assert.equal(list.length, 1);
  assert.equal(spent(list), ALL_CHANNELS);
  assert.equal(await balanceMicros(world.deps.sql, world.team.id), toMicros(1) - ALL_CHANNELS);
  assert.equal(list[0].reference, `otp:${(await res.json()).session_id}`);
});

dbTest("custom templates: the fee up front, each delivery when sent, and the same total", async () => {
  const world = await otpWorld({ config: PRICES, balance: 1 });
  await customTemplates(world);
  const res = await world.post("/send", threeChannels());
  const body = await res.json();
  assert.equal(body.channels_results.sms.used_custom_template, true);
  const list = await entries(world);
  assert.equal(list.length, 4, "fee, then one charge per message");
  assert.equal(list[0].amount_micros, -toMicros(0.005));
  assert.deepEqual(list.slice(1).map((e) => e.amount_micros).sort((a, b) => a - b), [
    -toMicros(0.0075),
    -toMicros(0.0035),
    -toMicros(0.0001),
  ]);
  assert.equal(spent(list), ALL_CHANNELS);
});

dbTest("an SMS is charged per segment: 153 GSM-7 characters each when split, 67 otherwise", async () => {
  const world = await otpWorld({ config: PRICES, balance: 1 });
  await upsertTemplate(world.deps.sql, world.team.id, "sms", "verify-api-otp-sms", {
    body: `{{otp_code}} {{expiry_minutes}} ${"x".repeat(200)}`,
  });
  await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone() } });
  assert.equal(spent(await entries(world)), toMicros(0.005) + 2 * toMicros(0.0075));

  const unicode = await otpWorld({ config: PRICES, balance: 1 });
  await upsertTemplate(unicode.deps.sql, unicode.team.id, "sms", "verify-api-otp-sms", {
    body: `{{otp_code}} {{expiry_minutes}} ${"é".repeat(10)}${"ж".repeat(60)}`,
  });
  await unicode.post("/send", { channels: ["sms"], recipients: { sms: randomPhone() } });
  assert.equal(spent(await entries(unicode)), toMicros(0.005) + 2 * toMicros(0.0075));
});

dbTest("a wallet that cannot pay is 402, and nothing is stored, sent or charged", async () => {
  for (const custom of [false, true]) {
    // Enough for the fee and the email, not for the SMS and WhatsApp messages.
    const world = await otpWorld({ config: PRICES, balance: 0.0051 });
    if (custom) await customTemplates(world);
    const res = await world.post("/send", threeChannels());
    assert.equal(res.status, 402);
    const body = await res.json();
    assert.equal(body.code, "insufficient_balance");
    assert.equal(body.message, "Insufficient wallet balance. Required: 0.0161, Available: 0.0051");
    assert.deepEqual(await entries(world), []);
    assert.equal((await world.deps.sql`select 1 from outbox_all where team_id = ${world.team.id}`).length, 0);
    const stored = await world.deps.otpSessions.countActive(world.team.id, world.deps.now());
    assert.equal(stored.count, 0, "no session stored");
  }
});

dbTest("test keys and sandbox_mode never charge, even with an empty wallet", async () => {
  const world = await otpWorld({ config: PRICES, balance: 0 });
  const test = await world.post("/send", threeChannels(), { key: world.keys.test });
  assert.equal(test.status, 200);
  const sandbox = await world.post("/send", { ...threeChannels(), sandbox_mode: true });
  assert.equal(sandbox.status, 200);
  const resend = await world.post("/resend", { session_token: (await test.json()).session_token });
  assert.equal(resend.status, 200);
  assert.deepEqual(await entries(world), []);
});

dbTest("a message the provider refuses is refunded and reported unsent", async () => {
  const world = await otpWorld({ config: PRICES, balance: 1 });
  await upsertTemplate(world.deps.sql, world.team.id, "sms", "verify-api-otp-sms", {
    body: "{{otp_code}} {{expiry_minutes}}",
  });
  const failing: Providers = {
    outbox: world.deps.providers.outbox,
    get: (channel, options) =>
      channel === "email" ? world.deps.providers.get(channel, options) : {
        name: "failing",
        resendable: true,
        send: () => Promise.reject(new ProviderError("refused")),
      },
  };
  const app = createService({ ...world.deps, providers: failing });
  const res = await app.request(
    "/api/v1/otp/send",
    jsonRequest("POST", threeChannels(), { "X-API-Key": world.keys.live, "X-Forwarded-For": world.ip }),
  );
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(
    Object.fromEntries(Object.entries(body.channels_sent).map(([ch, r]) => [ch, (r as { success: boolean }).success])),
    { email: true, sms: false, whatsapp: false },
  );
  assert.equal(body.channels_results.sms.success, false);
  // Only the fee and the email are kept.
  assert.equal(spent(await entries(world)), toMicros(0.005) + toMicros(0.0001));
  const session = await world.deps.otpSessions.get(world.team.id, body.session_id);
  assert.ok(session?.value, "the session stays: a resend can try again");
});

dbTest(
  "with no provider configured, a live OTP pays the verification fee only: its messages stay in the outbox",
  async () => {
    const world = await otpWorld({ config: { ...PRICES, BILL_OUTBOX: false }, balance: 1 });
    const res = await world.post("/send", threeChannels());
    assert.equal(res.status, 200);
    assert.equal(spent(await entries(world)), toMicros(0.005));
    // Custom templates, charged as each is sent: nothing more either.
    await customTemplates(world);
    assert.equal((await world.post("/send", threeChannels())).status, 200);
    assert.equal(spent(await entries(world)), toMicros(0.005) * 2);
  },
);

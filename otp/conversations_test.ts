import assert from "node:assert/strict";
import { createService } from "../main.ts";
import { toMicros } from "../shared/money.ts";
import type { Providers } from "../shared/providers/registry.ts";
import { ProviderError } from "../shared/providers/types.ts";
import { CONVERSATION_MS } from "../shared/sending/conversations.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { dbTest, jsonRequest } from "../shared/testing.ts";
import { ledger } from "../shared/wallet.ts";
import { type OtpWorld, otpWorld, randomPhone } from "./testing.ts";

const PRICES = { PRICE_OTP_VERIFICATION: 0.005, PRICE_WHATSAPP_AUTHENTICATION: 0.0035 };
const FEE = toMicros(0.005);
const WHATSAPP = toMicros(0.0035);

async function spent(world: OtpWorld): Promise<number> {
  const [{ micros }] = await world.deps.sql`select coalesce(-sum(amount_micros), 0)::bigint as micros
    from wallet_ledger where team_id = ${world.team.id} and kind <> 'topup'`;
  return micros;
}

async function sendCode(world: OtpWorld, phone: string) {
  const res = await world.post("/send", { channels: ["whatsapp"], recipients: { whatsapp: phone } });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.channels_results.whatsapp.success, true);
  return body;
}

dbTest("an OTP over WhatsApp opens an AUTHENTICATION conversation: codes inside it pay the fee only", async () => {
  let now = Date.UTC(2030, 0, 1, 9, 0, 0);
  const world = await otpWorld({ config: PRICES, balance: 1, now: () => now });
  const phone = randomPhone();
  const first = await sendCode(world, phone);
  assert.equal(await spent(world), FEE + WHATSAPP);
  const [entry] = await ledger(world.deps.sql, world.team.id, 1);
  assert.equal(
    entry.description,
    `OTP verification (whatsapp); WhatsApp AUTHENTICATION conversation opened by message ${first.channels_sent.whatsapp.message_id}`,
  );
  // A resend and another session inside the 24 hours: the code's delivery is not charged again.
  now += 60_000;
  assert.equal((await world.post("/resend", { session_token: first.session_token })).status, 200);
  await sendCode(world, phone);
  assert.equal(await spent(world), 2 * FEE + WHATSAPP);
  // Another number opens its own conversation.
  await sendCode(world, randomPhone());
  assert.equal(await spent(world), 3 * FEE + 2 * WHATSAPP);
  // 24 hours after the first opened, a code to that number opens a new one.
  now = Date.UTC(2030, 0, 1, 9, 0, 0) + CONVERSATION_MS;
  await sendCode(world, phone);
  assert.equal(await spent(world), 4 * FEE + 3 * WHATSAPP);
});

dbTest("a WhatsApp code on a custom template is charged at send, naming the conversation it opens", async () => {
  const world = await otpWorld({ config: PRICES, balance: 1 });
  await upsertTemplate(world.deps.sql, world.team.id, "whatsapp", "verify_api_otp_whatsapp", { body: "{{1}} {{2}}" });
  const phone = randomPhone();
  const first = await sendCode(world, phone);
  const [entry] = await ledger(world.deps.sql, world.team.id, 1);
  assert.equal(
    entry.description,
    `WhatsApp AUTHENTICATION conversation opened by message ${first.channels_sent.whatsapp.message_id}`,
  );
  await sendCode(world, phone);
  assert.equal(await spent(world), 2 * FEE + WHATSAPP);
});

dbTest("a WhatsApp code the provider refuses is refunded and opens no conversation", async () => {
  const world = await otpWorld({ config: PRICES, balance: 1 });
  const refusing: Providers = {
    outbox: world.deps.providers.outbox,
    get: () => ({ name: "failing", resendable: true, send: () => Promise.reject(new ProviderError("refused")) }),
  };
  const app = createService({ ...world.deps, providers: refusing });
  const phone = randomPhone();
  const res = await app.request(
    "/api/v1/otp/send",
    jsonRequest("POST", { channels: ["whatsapp"], recipients: { whatsapp: phone } }, {
      "X-API-Key": world.keys.live,
      "X-Forwarded-For": world.ip,
    }),
  );
  assert.equal((await res.json()).channels_results.whatsapp.success, false);
  assert.equal(await spent(world), FEE);
  // The next code to the number opens the conversation, and is charged.
  await sendCode(world, phone);
  assert.equal(await spent(world), 2 * FEE + WHATSAPP);
});

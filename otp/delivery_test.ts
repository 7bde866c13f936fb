import assert from "node:assert/strict";
import { channelAccountsKey, putChannelAccounts } from "../shared/channel_accounts.ts";
import { toMicros } from "../shared/money.ts";
import { hasDefaultProvider } from "../shared/providers/registry.ts";
import { dbTest } from "../shared/testing.ts";
import { balanceMicros } from "../shared/wallet.ts";
import { randomHex, startFakeTwilio, type TwilioErrorBody } from "../harness/fakes/fake_servers.ts";
import { type OtpWorld, otpWorld, randomPhone } from "./testing.ts";

const PRICES = { PRICE_OTP_VERIFICATION: 0.005, PRICE_SMS_SEGMENT: 0.0075 };

/**
 * A team funded with $1 on a service with no SMS provider and the outbox unbilled, as in production,
 * with a Twilio account of its own on a fake Twilio answering as `errors` say.
 */
async function withOwnTwilio(errors: Record<string, TwilioErrorBody> = {}) {
  const world: OtpWorld = await otpWorld({ config: { ...PRICES, BILL_OUTBOX: false }, balance: 1 });
  assert.equal(hasDefaultProvider(world.deps.providers, "sms"), false, "the tests run with no TWILIO_* set");
  const credentials = { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16) };
  const server = startFakeTwilio({ ...credentials, errors });
  const key = await channelAccountsKey(world.deps.config.CHANNEL_ACCOUNTS_KEY);
  await putChannelAccounts(
    world.deps.sql,
    key,
    { teamId: world.team.id, channel: "sms", failoverOnTimeout: false },
    [{
      provider: "twilio",
      credentials: { account_sid: credentials.accountSid, auth_token: credentials.authToken, from: "+15005550006" },
      base_url: server.url,
    }],
  );
  return {
    world,
    server,
    balance: () => balanceMicros(world.deps.sql, world.team.id),
    async [Symbol.asyncDispose]() {
      await server.close();
    },
  };
}

dbTest("a live OTP SMS with no SMS provider goes through the team's own Twilio account, charged", async () => {
  await using t = await withOwnTwilio();
  const phone = randomPhone();

  const res = await t.world.post("/send", { channels: ["sms"], recipients: { sms: phone } });

  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.channels_results.sms.success, true);
  assert.deepEqual(t.server.messages.map((m) => [m.to, m.from]), [[phone, "+15005550006"]]);
  assert.match(t.server.messages[0].body ?? "", /\d{6}/, "the code itself, not an outbox copy");
  // The fee and the SMS, as with a provider of the service's own.
  assert.equal(await t.balance(), toMicros(1) - toMicros(0.005) - toMicros(0.0075));
});

dbTest("a live OTP SMS the team's account refuses is not sent and its delivery is refunded", async () => {
  const phone = randomPhone();
  await using t = await withOwnTwilio({ [phone]: { status: 400, code: 21211, message: "Invalid 'To' Phone Number" } });

  const res = await t.world.post("/send", { channels: ["sms"], recipients: { sms: phone } });

  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.channels_results.sms.success, false);
  assert.equal(t.server.messages.length, 0);
  // The verification fee alone is kept, as when a provider of the service's own refuses.
  assert.equal(await t.balance(), toMicros(1) - toMicros(0.005));
});

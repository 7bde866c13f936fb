import assert from "node:assert/strict";
import { type ChannelAccountInput, channelAccountsKey, putChannelAccounts } from "../shared/channel_accounts.ts";
import { MAX_DELIVERY_ATTEMPTS } from "../shared/backoff.ts";
import type { Deps } from "../shared/deps.ts";
import { toMicros } from "../shared/money.ts";
import { hasDefaultProvider, noProviderNote } from "../shared/providers/registry.ts";
import { randomHex, startFakeResend, startFakeTwilio, type TwilioErrorBody } from "../harness/fakes/fake_servers.ts";
import { dbTest, testDeps } from "../shared/testing.ts";
import { balanceMicros } from "../shared/wallet.ts";
import { createWorkerContext } from "./context.ts";
import { runJob } from "./queue.ts";
import { counts, smsFanOut, triggerRow } from "./sms_testing.ts";
import { sendingFixture } from "./testing.ts";

const SMS_MICROS = 7_500;
/** The number smsFanOut's first contact has. */
const FIRST = "+14155552000";
const UNAVAILABLE: TwilioErrorBody = { status: 503, code: 20503, message: "Service unavailable" };

/**
 * One live SMS (to FIRST, from a team funded with $10) on a service with no SMS provider and the
 * outbox unbilled, as in production; with `errors`, the team has a Twilio account of its own on a
 * fake Twilio answering as they say. `run` runs its deliver-batch job (`attempt`: its try).
 */
async function withoutDefault(options: { errors?: Record<string, TwilioErrorBody> } | null) {
  const deps: Deps = await testDeps({ BILL_OUTBOX: false });
  assert.equal(hasDefaultProvider(deps.providers, "sms"), false, "the tests run with no TWILIO_* set");
  const { team, spec, job } = await smsFanOut(deps, 1);
  const credentials = { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16), from: "+15005550006" };
  const server = options ? startFakeTwilio({ ...credentials, errors: options.errors }) : undefined;
  let accountId: string | undefined;
  if (server) {
    const input: ChannelAccountInput = {
      provider: "twilio",
      credentials: { account_sid: credentials.accountSid, auth_token: credentials.authToken, from: credentials.from },
      base_url: server.url,
    };
    const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
    const list = await putChannelAccounts(
      deps.sql,
      key,
      { teamId: team.id, channel: "sms", failoverOnTimeout: false },
      [
        input,
      ],
    );
    accountId = list.accounts[0].id;
  }
  const run = (attempt = 0) => runJob(createWorkerContext(deps), { ...job, id: crypto.randomUUID(), attempt });
  const row = async () => {
    const [r] = await deps.sql`
      select status, provider, error, cost_micros, in_outbox, note, handed_account, attempts
      from messages where trigger_id = ${spec.trigger_id}`;
    return { ...r };
  };
  return {
    deps,
    team,
    spec,
    server,
    accountId,
    run,
    row,
    balance: () => balanceMicros(deps.sql, team.id),
    async [Symbol.asyncDispose]() {
      await server?.close();
    },
  };
}

dbTest("a live SMS with no default provider goes through the team's own Twilio account, charged", async () => {
  await using t = await withoutDefault({});

  await t.run();

  assert.deepEqual(t.server!.messages.map((m) => [m.to, m.from]), [[FIRST, "+15005550006"]]);
  const row = await t.row();
  assert.equal(row.status, "sent");
  assert.equal(row.provider, "twilio");
  assert.equal(row.in_outbox, false, "not kept in the outbox");
  assert.equal(row.note, null);
  assert.equal(row.handed_account, t.accountId);
  assert.deepEqual(row.attempts.map((a: Record<string, unknown>) => [a.account, a.outcome]), [[t.accountId, "sent"]]);
  assert.equal(Number(row.cost_micros), SMS_MICROS);
  assert.equal(await t.balance(), toMicros(10) - SMS_MICROS, "charged like any live message");
  assert.deepEqual(await triggerRow(t.deps, t.spec.trigger_id), counts("completed", 1, 1, 0, 0));
});

dbTest("a live SMS with no default provider, of a team without accounts, is kept in the outbox uncharged", async () => {
  await using t = await withoutDefault(null);

  await t.run();

  const row = await t.row();
  assert.equal(row.status, "sent");
  assert.equal(row.provider, "outbox");
  assert.equal(row.in_outbox, true);
  assert.equal(row.note, noProviderNote("sms"));
  assert.equal(row.attempts, null);
  assert.equal(Number(row.cost_micros), 0);
  assert.equal(await t.balance(), toMicros(10), "not charged");
});

dbTest(
  "an SMS whose only account answers 503 stays pending, then fails after the last try and is refunded, never in the outbox",
  async () => {
    await using t = await withoutDefault({ errors: { [FIRST]: UNAVAILABLE } });

    await t.run();

    let row = await t.row();
    assert.equal(row.status, "pending", "left for a retry, not sent to the outbox");
    assert.equal(row.in_outbox, false);
    assert.deepEqual(row.attempts.map((a: Record<string, unknown>) => a.outcome), ["temporary"]);
    assert.equal(await t.balance(), toMicros(10) - SMS_MICROS, "charged while it waits");

    await t.run(MAX_DELIVERY_ATTEMPTS - 1);

    row = await t.row();
    assert.equal(row.status, "failed");
    assert.match(row.error, /Service unavailable.*gave up after retries/);
    assert.equal(row.in_outbox, false);
    assert.deepEqual(row.attempts.map((a: Record<string, unknown>) => a.outcome), ["temporary", "temporary"]);
    assert.equal(t.server!.messages.length, 0);
    assert.equal(Number(row.cost_micros), 0);
    assert.equal(await t.balance(), toMicros(10), "refunded");
    assert.deepEqual(await triggerRow(t.deps, t.spec.trigger_id), counts("failed", 1, 0, 1, 0));
    const outbox = await t.deps.sql`select 1 from messages where trigger_id = ${t.spec.trigger_id} and in_outbox`;
    assert.equal(outbox.length, 0);
  },
);

dbTest(
  "with no provider configured, live sends go through the team's Twilio and Resend accounts; test-key sends to the outbox",
  async () => {
    // Email is priced here, so that its charge shows.
    const f = await sendingFixture("pro", { BILL_OUTBOX: false, PRICE_EMAIL: 0.001 });
    assert.equal(hasDefaultProvider(f.deps.providers, "email"), false, "the tests run with no RESEND_API_KEY set");
    await f.fund(1);
    const twilio = { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16) };
    await using fakeTwilio = startFakeTwilio(twilio);
    const apiKey = `re_${randomHex(8)}`;
    await using fakeResend = startFakeResend({ apiKey });
    const key = await channelAccountsKey(f.deps.config.CHANNEL_ACCOUNTS_KEY);
    const put = (channel: "sms" | "email", input: ChannelAccountInput) =>
      putChannelAccounts(f.deps.sql, key, { teamId: f.team.id, channel, failoverOnTimeout: false }, [input]);
    await put("sms", {
      provider: "twilio",
      credentials: { account_sid: twilio.accountSid, auth_token: twilio.authToken, from: "+15005550006" },
      base_url: fakeTwilio.url,
    });
    await put("email", { provider: "resend", credentials: { api_key: apiKey }, base_url: fakeResend.url });
    await f.template("sms", "hi", { body: "Hi" });
    await f.template("email", "hi", { subject: "Hi", html: "<p>Hi</p>" });
    const sms = { template_key: "hi", recipient_type: "direct_sms", direct_phone: "+14155550123" };
    const email = { template_key: "hi", recipient_type: "direct_email", direct_email: "ann@example.com" };
    const messageOf = async (triggerId: string) => {
      const [m] = await f.deps.sql`
        select status, provider, in_outbox, cost_micros from messages where trigger_id = ${triggerId}`;
      return [m.status, m.provider, m.in_outbox, Number(m.cost_micros) > 0];
    };

    const liveSms = await f.finished(await f.post("/api/v1/sms/send", sms));
    const liveEmail = await f.finished(await f.post("/api/v1/messages/send", email));

    assert.deepEqual(await messageOf(liveSms.trigger_id), ["sent", "twilio", false, true]);
    assert.deepEqual(await messageOf(liveEmail.trigger_id), ["sent", "resend", false, true]);
    assert.equal(fakeTwilio.messages.length, 1);
    assert.equal(fakeResend.requests.filter((r) => r.path === "/emails").length, 1);
    assert.ok(await f.balance() < 1, "charged");

    const testSms = await f.finished(await f.post("/api/v1/sms/send", sms, f.keys.test));
    const testEmail = await f.finished(await f.post("/api/v1/messages/send", email, f.keys.test));

    assert.deepEqual(await messageOf(testSms.trigger_id), ["sent", "outbox", true, false]);
    assert.deepEqual(await messageOf(testEmail.trigger_id), ["sent", "outbox", true, false]);
    assert.equal(fakeTwilio.messages.length, 1, "a test key's SMS never reaches the team's account");
    assert.equal(fakeResend.requests.filter((r) => r.path === "/emails").length, 1);
  },
);

import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { channelAccountsKey, putChannelAccounts } from "../../shared/channel_accounts.ts";
import { createContact } from "../../shared/contacts/queries.ts";
import type { Deps, Team } from "../../shared/deps.ts";
import { toMicros } from "../../shared/money.ts";
import { hasDefaultProvider, noProviderNote } from "../../shared/providers/registry.ts";
import type { Channel } from "../../shared/providers/types.ts";
import { newSendSpec, outboxedChannels, sendingService } from "../../shared/sending/accept.ts";
import { upsertTemplate } from "../../shared/templates.ts";
import { countingDb, dbTest, jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";
import { topUp } from "../../shared/wallet.ts";

// The suite bills the outbox (BILL_OUTBOX) so that its sends check the wallet; here it is off, as in
// production, so that a channel with no provider keeps its live messages in the outbox, free.
async function setup() {
  const deps = await testDeps({ BILL_OUTBOX: false });
  assert.equal(hasDefaultProvider(deps.providers, "sms"), false, "the tests run with no TWILIO_* set");
  assert.equal(hasDefaultProvider(deps.providers, "email"), false, "the tests run with no RESEND_API_KEY set");
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  await upsertTemplate(deps.sql, team.id, "sms", "code", { body: "Your code is {{code}}" });
  await upsertTemplate(deps.sql, team.id, "email", "code", { subject: "Code", html: "<p>{{code}}</p>" });
  const call = async (path: string, body: unknown, key = keys.live) => {
    const res = await app.request(path, jsonRequest("POST", body, { "X-API-Key": key }));
    return { status: res.status, body: await res.json() };
  };
  return { deps, team, keys, call };
}

/** Gives the team a Twilio account of its own for SMS (never called here: only accepting is tested). */
async function ownSmsAccount(deps: Deps, team: Team): Promise<void> {
  const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
  await putChannelAccounts(deps.sql, key, { teamId: team.id, channel: "sms", failoverOnTimeout: false }, [{
    provider: "twilio",
    credentials: { account_sid: `AC${"1".repeat(32)}`, auth_token: "2".repeat(32), from: "+15005550006" },
  }]);
}

const SMS = {
  template_key: "code",
  recipient_type: "direct_sms",
  direct_phone: "+14155550123",
  variables: { code: 7 },
};

dbTest(
  "POST /sms/send of a team with its own SMS account and no SMS provider checks the wallet and warns of no outbox",
  async () => {
    const { deps, team, keys, call } = await setup();
    await ownSmsAccount(deps, team);

    const poor = await call("/api/v1/sms/send", SMS);
    assert.equal(poor.status, 400, JSON.stringify(poor.body));
    assert.equal(poor.body.message, "Insufficient wallet balance. Required: 0.0075, Available: 0");
    assert.equal(poor.body.code, "insufficient_balance");

    await topUp(deps.sql, team.id, toMicros(1));
    const paid = await call("/api/v1/sms/send", SMS);
    assert.equal(paid.status, 201, JSON.stringify(paid.body));
    assert.equal(paid.body.warnings, undefined, "its messages go through its account, not to the outbox");

    // A test key always uses the outbox, free: no wallet asked, no warning.
    const sandbox = await call("/api/v1/sms/send", SMS, keys.test);
    assert.equal(sandbox.status, 201, JSON.stringify(sandbox.body));
    assert.equal(sandbox.body.warnings, undefined);
  },
);

dbTest("POST /sms/send of a team without accounts, on the same service, is still kept in the outbox", async () => {
  const { call } = await setup();
  const accepted = await call("/api/v1/sms/send", SMS);
  assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
  assert.deepEqual(accepted.body.warnings, [noProviderNote("sms")]);
});

dbTest(
  "POST /messages/trigger charges the channel a team's account carries and warns only of the outboxed one",
  async () => {
    const { deps, team, call } = await setup();
    await ownSmsAccount(deps, team);
    const contact = await createContact(deps.sql, team.id, {
      email: `buyer.${crypto.randomUUID().slice(0, 8)}@example.com`,
      custom_fields: { phone: "+14155550124" },
    });
    const trigger = {
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      channels: ["email", "sms"],
      template_key: "code",
      variables: { code: 7 },
    };

    const poor = await call("/api/v1/messages/trigger", trigger);
    assert.equal(poor.status, 400, JSON.stringify(poor.body));
    // The SMS alone: the email is kept in the outbox, free.
    assert.equal(poor.body.message, "Insufficient wallet balance. Required: 0.0075, Available: 0");
    assert.equal(poor.body.code, "insufficient_balance");

    await topUp(deps.sql, team.id, toMicros(0.0075));
    const paid = await call("/api/v1/messages/trigger", trigger);
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    assert.deepEqual(paid.body.warnings, [noProviderNote("email")]);
  },
);

dbTest(
  "outboxedChannels() reads a team's accounts only for a live channel with no provider and CHANNEL_ACCOUNTS_KEY set",
  async () => {
    const base = await testDeps({ BILL_OUTBOX: false });
    const { team } = await testTeam(base);
    await ownSmsAccount(base, team);
    const outboxed = async (config: Partial<Deps["config"]>, sandbox = false) => {
      const { db, statements } = countingDb(base.sql);
      const deps: Deps = { ...base, sql: db, config: { ...base.config, ...config } };
      const spec = newSendSpec({
        team_id: team.id,
        sandbox,
        trigger_type: "multi_channel",
        body: { recipient_type: "direct" },
        recipient: { type: "direct", address: "+14155550123" },
        contents: [
          { channel: "sms", template_key: "code", category: "transactional" },
          { channel: "email", template_key: "code", category: "transactional" },
        ],
        now: Date.now(),
        at: undefined,
      });
      const channels = await outboxedChannels({ ...sendingService(base), deps }, spec);
      return { channels: [...channels].sort() as Channel[], statements: statements() };
    };

    assert.deepEqual(await outboxed({}), { channels: ["email"], statements: 1 });
    // Without the key no account can be opened: the worker keeps the SMS in the outbox too.
    assert.deepEqual(await outboxed({ CHANNEL_ACCOUNTS_KEY: undefined }), {
      channels: ["email", "sms"],
      statements: 0,
    });
    // Billed like a provider, or a test key's: nothing is kept in the outbox for want of a provider.
    assert.deepEqual(await outboxed({ BILL_OUTBOX: true }), { channels: [], statements: 0 });
    assert.deepEqual(await outboxed({}, true), { channels: [], statements: 0 });
  },
);

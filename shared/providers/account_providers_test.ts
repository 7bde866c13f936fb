import assert from "node:assert/strict";
import { ulid } from "ulid";
import { channelAccountsKey, putChannelAccounts } from "../channel_accounts.ts";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import { generateSecretKey } from "../secret_box.ts";
import { failoverAccounts } from "./account_providers.ts";
import { CircuitBreakers } from "./circuit_breaker.ts";
import { sendWithFailover } from "./failover.ts";
import {
  generateP256KeyPair,
  generateRsaKeyPair,
  randomHex,
  startFakeApns,
  startFakeFcm,
  startFakeResend,
  startFakeTwilio,
} from "../../harness/fakes/fake_servers.ts";
import { startFakeVonage } from "../../harness/fakes/fake_vonage.ts";
import type { Deps } from "../deps.ts";
import type { OutboundMessage, Provider } from "./types.ts";

/** `deps` whose live SMS go to a provider of the service's own (never called here). */
function withDefaultSms(deps: Deps): Deps {
  const sms: Provider = {
    name: "default-sms",
    resendable: false,
    send: () => Promise.reject(new Error("Cannot send: the default provider is not used here")),
  };
  const providers = deps.providers;
  return {
    ...deps,
    providers: {
      outbox: providers.outbox,
      get: (channel, options) => channel === "sms" && !options.sandbox ? sms : providers.get(channel, options),
    },
  };
}

dbTest(
  "failoverAccounts() gives a team's stored accounts in order, then the default; Twilio 503 goes to Vonage",
  async () => {
    const deps = withDefaultSms(await testDeps());
    const { team } = await testTeam(deps);
    const to = `+4477009${String(Date.now() % 10_000_000).padStart(7, "0")}`;
    const twilio = { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16) };
    const vonage = { apiKey: "a1b2c3d4", apiSecret: `s-${randomHex(8)}` };
    await using fakeTwilio = startFakeTwilio({
      ...twilio,
      errors: { [to]: { status: 503, code: 20503, message: "Service unavailable" } },
    });
    await using fakeVonage = startFakeVonage(vonage);
    const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
    await putChannelAccounts(deps.sql, key, { teamId: team.id, channel: "sms", failoverOnTimeout: false }, [
      {
        provider: "twilio",
        credentials: { account_sid: twilio.accountSid, auth_token: twilio.authToken },
        base_url: fakeTwilio.url,
      },
      {
        provider: "vonage",
        credentials: { api_key: vonage.apiKey, api_secret: vonage.apiSecret, from: "Acme" },
        base_url: fakeVonage.url,
      },
    ]);

    const { accounts, failoverOnTimeout } = await failoverAccounts(deps, team.id, "sms");
    assert.equal(failoverOnTimeout, false);
    assert.deepEqual(accounts.map((a) => a.provider.name), ["twilio", "vonage", "default-sms"]);
    assert.equal(accounts[2].id, "default:sms");

    const message: OutboundMessage = {
      id: ulid(),
      teamId: team.id,
      channel: "sms",
      to,
      from: "+15005550006",
      text: "Hi",
    };
    const result = await sendWithFailover(message, accounts, { breakers: new CircuitBreakers() });
    assert.deepEqual(result.attempts.map((a) => [a.provider, a.outcome]), [["twilio", "temporary"], [
      "vonage",
      "sent",
    ]]);
    assert.equal(fakeVonage.messages.length, 1);
    assert.equal(fakeVonage.messages[0].from, "Acme", "the account's own sender");
  },
);

dbTest(
  "failoverAccounts() without CHANNEL_ACCOUNTS_KEY, or for a team with none, is the default provider alone",
  async () => {
    const deps = withDefaultSms(await testDeps());
    const { team } = await testTeam(deps);
    const none = await failoverAccounts(deps, team.id, "sms");
    assert.deepEqual(none.accounts.map((a) => a.id), ["default:sms"]);
    const keyless = await failoverAccounts(
      { ...deps, config: { ...deps.config, CHANNEL_ACCOUNTS_KEY: undefined } },
      team.id,
      "sms",
    );
    assert.deepEqual(keyless.accounts.map((a) => a.id), ["default:sms"]);
  },
);

dbTest(
  "failoverAccounts() of accounts sealed under another key is the default alone; a database error fails it",
  async () => {
    const deps = withDefaultSms(await testDeps());
    const { team } = await testTeam(deps);
    const twilio = { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16) };
    await using fakeTwilio = startFakeTwilio(twilio);
    const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
    await putChannelAccounts(deps.sql, key, { teamId: team.id, channel: "sms", failoverOnTimeout: false }, [{
      provider: "twilio",
      credentials: { account_sid: twilio.accountSid, auth_token: twilio.authToken },
      base_url: fakeTwilio.url,
    }]);
    const rekeyed = { ...deps, config: { ...deps.config, CHANNEL_ACCOUNTS_KEY: generateSecretKey() } };
    assert.deepEqual((await failoverAccounts(rekeyed, team.id, "sms")).accounts.map((a) => a.id), ["default:sms"]);
    // The database away (a restart): the pass must fail and run again, never go to the default meanwhile.
    const away = (() => Promise.reject(new Error("read ECONNRESET"))) as unknown as Deps["sql"];
    await assert.rejects(failoverAccounts({ ...deps, sql: away }, team.id, "sms"), /ECONNRESET/);
  },
);

dbTest("failoverAccounts() never ends with the outbox, where no provider is configured", async () => {
  const deps = await testDeps();
  assert.equal(deps.providers.get("email", { sandbox: false }), deps.providers.outbox);
  const { team } = await testTeam(deps);
  await using resend = startFakeResend({ apiKey: "re_team" });
  const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
  const [stored] =
    (await putChannelAccounts(deps.sql, key, { teamId: team.id, channel: "email", failoverOnTimeout: false }, [
      { provider: "resend", credentials: { api_key: "re_team" }, base_url: resend.url },
    ])).accounts;
  assert.deepEqual((await failoverAccounts(deps, team.id, "email")).accounts.map((a) => a.id), [stored.id]);
  assert.deepEqual((await failoverAccounts(deps, team.id, "sms")).accounts, [], "a team with none: nothing");
});

dbTest(
  "a team's push accounts each take their own service's tokens: an APNs token passes over the FCM account",
  async () => {
    const deps = await testDeps();
    const { team } = await testTeam(deps);
    const rsa = await generateRsaKeyPair();
    const p256 = await generateP256KeyPair();
    const project = { projectId: "team-app", clientEmail: "push@team-app.iam.gserviceaccount.com" };
    const apple = { teamId: "TEAM123456", keyId: "KEY1234567", bundleId: "com.team.app" };
    await using fcm = startFakeFcm({ ...project, publicKey: rsa.publicKey });
    await using apns = startFakeApns({ ...apple, publicKey: p256.publicKey });
    const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
    await putChannelAccounts(deps.sql, key, { teamId: team.id, channel: "push", failoverOnTimeout: false }, [
      {
        provider: "fcm",
        credentials: {
          project_id: project.projectId,
          client_email: project.clientEmail,
          private_key: rsa.privateKeyPem,
          token_uri: fcm.tokenUrl,
        },
        base_url: fcm.url,
      },
      {
        provider: "apns",
        credentials: {
          team_id: apple.teamId,
          key_id: apple.keyId,
          private_key: p256.privateKeyPem,
          bundle_id: apple.bundleId,
        },
        base_url: apns.url,
      },
    ]);
    const { accounts } = await failoverAccounts(deps, team.id, "push");
    const push = (to: string, platform: "ios" | "android"): OutboundMessage => ({
      id: ulid(),
      teamId: team.id,
      channel: "push",
      to,
      platform,
      title: "T",
      text: "B",
    });

    const ios = await sendWithFailover(push(randomHex(32), "ios"), accounts, { breakers: new CircuitBreakers() });
    assert.deepEqual(ios.attempts.map((a) => [a.provider, a.outcome]), [["apns", "sent"]]);
    const android = await sendWithFailover(push(`fcm-${randomHex(40)}`, "android"), accounts, {
      breakers: new CircuitBreakers(),
    });
    assert.deepEqual(android.attempts.map((a) => [a.provider, a.outcome]), [["fcm", "sent"]]);
    assert.equal(apns.requests.length, 1);
  },
);

import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { channelAccountsKey, loadChannelAccounts } from "../../shared/channel_accounts.ts";
import type { Config } from "../../shared/config.ts";
import { setLogLevel } from "../../shared/log.ts";
import { dbTest, jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";

const TOKEN = { Authorization: "Bearer test-admin-token-0123456789" };

const TWILIO_TOKEN = "7c0ffee7c0ffee7c0ffee7c0ffee9f3a";
const VONAGE_SECRET = "vonage-secret-Zq81";
const twilio = { provider: "twilio", credentials: { account_sid: `AC${"1".repeat(32)}`, auth_token: TWILIO_TOKEN } };
const vonage = {
  provider: "vonage",
  credentials: { api_key: "a1b2c3d4", api_secret: VONAGE_SECRET, from: "Acme" },
  base_url: "http://127.0.0.1:9/",
};

async function setup(overrides: Partial<Config> = {}) {
  const deps = await testDeps({ WEBHOOK_ALLOW_PRIVATE: true, ...overrides });
  const { team } = await testTeam(deps);
  const app = createService(deps);
  const path = (channel: string, teamId = team.id) => `/admin/v1/teams/${teamId}/channel-accounts/${channel}`;
  return {
    deps,
    team,
    put: (channel: string, body: unknown, teamId?: string) =>
      Promise.resolve(app.request(path(channel, teamId), jsonRequest("PUT", body, TOKEN))),
    get: (channel: string, teamId?: string) => Promise.resolve(app.request(path(channel, teamId), { headers: TOKEN })),
  };
}

dbTest("PUT channel-accounts stores the accounts in order and answers them with secrets masked", async () => {
  const { put, get } = await setup();
  const res = await put("sms", { accounts: [twilio, vonage], failover_on_timeout: true });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.channel, "sms");
  assert.equal(body.failover_on_timeout, true);
  assert.deepEqual(body.accounts.map((a: { provider: string; priority: number }) => [a.priority, a.provider]), [
    [0, "twilio"],
    [1, "vonage"],
  ]);
  assert.deepEqual(body.accounts[0].credentials, {
    account_sid: twilio.credentials.account_sid,
    auth_token: "****9f3a",
  });
  assert.deepEqual(body.accounts[1].credentials, { api_key: "a1b2c3d4", api_secret: "****", from: "Acme" });
  assert.equal(body.accounts[1].base_url, "http://127.0.0.1:9/");
  const read = await (await get("sms")).json();
  assert.deepEqual(read, body);
  for (const secret of [TWILIO_TOKEN, VONAGE_SECRET]) assert.equal(JSON.stringify(read).includes(secret), false);
});

dbTest("channel account credentials are encrypted at rest and open only with the key", async () => {
  const { put, deps, team } = await setup();
  assert.equal((await put("sms", { accounts: [twilio, vonage] })).status, 200);
  const rows: Record<string, unknown>[] = await deps.sql`
    select * from team_channel_accounts where team_id = ${team.id} order by priority`;
  assert.equal(rows.length, 2);
  const stored = JSON.stringify(rows, (_k, v) => v instanceof Uint8Array ? new TextDecoder().decode(v) : v);
  for (const secret of [TWILIO_TOKEN, VONAGE_SECRET]) assert.equal(stored.includes(secret), false, secret);
  const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
  const { accounts, failoverOnTimeout } = await loadChannelAccounts(deps.sql, key, team.id, "sms");
  assert.equal(failoverOnTimeout, false, "the default");
  assert.deepEqual(accounts.map((a) => a.credentials), [twilio.credentials, vonage.credentials]);
  assert.equal(accounts[1].baseUrl, "http://127.0.0.1:9/");
});

dbTest("a team's channel accounts are its own: another team reads none and cannot open them", async () => {
  const first = await setup();
  const second = await setup();
  assert.equal(
    (await first.put("email", { accounts: [{ provider: "resend", credentials: { api_key: "re_first_team_key" } }] }))
      .status,
    200,
  );
  assert.deepEqual((await (await second.get("email")).json()).accounts, []);
  assert.deepEqual((await (await first.get("sms")).json()).accounts, [], "per channel too");
  // A sealed credential copied into another team's row does not decrypt there.
  const sql = first.deps.sql;
  await second.put("email", { accounts: [{ provider: "resend", credentials: { api_key: "re_second_team_key" } }] });
  await sql`
    update team_channel_accounts t set credentials_ciphertext = f.credentials_ciphertext, credentials_iv = f.credentials_iv
    from team_channel_accounts f
    where t.team_id = ${second.team.id} and f.team_id = ${first.team.id} and f.channel = 'email' and t.channel = 'email'`;
  const key = await channelAccountsKey(first.deps.config.CHANNEL_ACCOUNTS_KEY);
  await assert.rejects(loadChannelAccounts(sql, key, second.team.id, "email"));
});

dbTest("PUT channel-accounts with [] removes them, and a new PUT replaces the list whole", async () => {
  const { put, get } = await setup();
  await put("sms", { accounts: [twilio, vonage] });
  await put("sms", { accounts: [vonage] });
  assert.deepEqual((await (await get("sms")).json()).accounts.map((a: { provider: string }) => a.provider), ["vonage"]);
  assert.equal((await put("sms", { accounts: [] })).status, 200);
  assert.deepEqual((await (await get("sms")).json()).accounts, []);
});

dbTest("PUT channel-accounts refuses bad bodies with a 400 that names the field, and stores nothing", async () => {
  const { put, get } = await setup({ WEBHOOK_ALLOW_PRIVATE: false });
  const cases: [unknown, RegExp, string?][] = [
    [
      { accounts: [{ provider: "twilio", credentials: { account_sid: "AC1", auth_token: TWILIO_TOKEN } }] },
      /account_sid/,
    ],
    [
      { accounts: [{ provider: "twilio", credentials: { account_sid: twilio.credentials.account_sid } }] },
      /auth_token/,
    ],
    [{ accounts: [{ ...twilio, credentials: { ...twilio.credentials, region: "ie1" } }] }, /region/],
    [
      { accounts: [{ provider: "resend", credentials: { api_key: "re_0123456789" } }] },
      /resend cannot send sms/,
      "provider_not_for_channel",
    ],
    [{ accounts: [{ provider: "mailgun", credentials: {} }] }, /provider/],
    [{ accounts: [{ ...vonage }] }, /base_url: must not point to a loopback address/, "invalid_provider_url"],
    [{ accounts: [twilio], failover_on_timeout: "yes" }, /failover_on_timeout/],
    [{ accounts: twilio }, /accounts/],
  ];
  for (const [body, message, code] of cases) {
    const res = await put("sms", body);
    assert.equal(res.status, 400, JSON.stringify(body));
    const error = await res.json();
    assert.match(JSON.stringify(error.message), message, JSON.stringify(error));
    if (code) assert.equal(error.code, code);
  }
  const smtp = { provider: "smtp", credentials: { host: "localhost", port: 25 } };
  assert.match(JSON.stringify((await (await put("email", { accounts: [smtp] })).json()).message), /credentials\.host/);
  assert.equal((await put("whatsapp", { accounts: [vonage] })).status, 400, "vonage does not carry whatsapp here");
  assert.deepEqual((await (await get("sms")).json()).accounts, []);
});

dbTest("PUT channel-accounts without CHANNEL_ACCOUNTS_KEY is 503 saying the operator must set it", async () => {
  const { put, get } = await setup({ CHANNEL_ACCOUNTS_KEY: undefined });
  const res = await put("sms", { accounts: [twilio] });
  assert.equal(res.status, 503);
  const error = await res.json();
  assert.equal(error.code, "channel_accounts_key_missing");
  assert.match(error.message, /operator must set CHANNEL_ACCOUNTS_KEY/);
  assert.equal((await get("sms")).status, 200, "reading needs no key");
});

dbTest("channel accounts of an unknown team are 404, of an unknown channel 400", async () => {
  const { put, get } = await setup();
  assert.equal((await get("sms", crypto.randomUUID())).status, 404);
  assert.equal((await put("sms", { accounts: [twilio] }, crypto.randomUUID())).status, 404);
  assert.equal((await get("fax")).status, 400);
});

dbTest("a PUT of channel accounts writes a log line that holds no secret", async () => {
  const { put } = await setup();
  const lines: string[] = [];
  const original = { log: console.log, error: console.error };
  console.log = (...args: unknown[]) => lines.push(args.join(" "));
  console.error = (...args: unknown[]) => lines.push(args.join(" "));
  setLogLevel("debug");
  try {
    assert.equal((await put("sms", { accounts: [twilio, vonage] })).status, 200);
    await put("sms", { accounts: [{ ...twilio, credentials: { ...twilio.credentials, extra: TWILIO_TOKEN } }] });
  } finally {
    setLogLevel("silent");
    Object.assign(console, original);
  }
  assert.ok(lines.some((l) => l.includes('"channel accounts set"') && l.includes('"vonage"')), lines.join("\n"));
  for (const secret of [TWILIO_TOKEN, VONAGE_SECRET]) {
    assert.equal(lines.some((l) => l.includes(secret)), false, secret);
  }
});

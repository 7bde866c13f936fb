import assert from "node:assert/strict";
import {
  channelAccountsKey,
  listChannelAccounts,
  loadChannelAccounts,
  putChannelAccounts,
} from "../../shared/channel_accounts.ts";
import { startFakeTwilio } from "../../harness/fakes/fake_servers.ts";
import { startFakeVonage } from "../../harness/fakes/fake_vonage.ts";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { dashboardFixture, type Visitor } from "./testing.ts";

const hex = (n: number) => crypto.randomUUID().replaceAll("-", "").repeat(2).slice(0, n);

function twilioAccount() {
  return { account_sid: `AC${hex(32)}`, auth_token: hex(32) };
}

/** The ids of the accounts the page lists for a channel, in order (read from their Check forms). */
function accountIds(html: string, channel: string): string[] {
  return [...html.matchAll(new RegExp(`/dashboard/channel-accounts/${channel}/([0-9a-f-]{36})/check`, "g"))]
    .map((m) => m[1]);
}

/** An owner signed in, with loopback provider URLs allowed (the fakes listen there). */
async function ownerFixture() {
  const f = await dashboardFixture({ WEBHOOK_ALLOW_PRIVATE: true });
  const v = f.visitor();
  await v.signIn(f.owner.email);
  return { ...f, v };
}

async function addTwilio(v: Visitor, credentials: { account_sid: string; auth_token: string }, baseUrl: string) {
  const form = await v.get("/dashboard/channel-accounts/sms/new?provider=twilio");
  assert.equal(form.status, 200);
  return await v.post("/dashboard/channel-accounts/sms", { provider: "twilio", ...credentials, base_url: baseUrl });
}

dbTest(
  "an owner adds a Twilio account: listed masked, its token never shown again, and Check asks Twilio",
  async () => {
    const f = await ownerFixture();
    const credentials = twilioAccount();
    await using twilio = startFakeTwilio({ accountSid: credentials.account_sid, authToken: credentials.auth_token });
    const added = await addTwilio(f.v, credentials, twilio.url);
    assert.equal(added.status, 303, added.html);
    const page = await f.v.get("/dashboard/channel-accounts");
    assert.equal(page.status, 200);
    assert.ok(page.html.includes(credentials.account_sid));
    assert.ok(page.html.includes(`****${credentials.auth_token.slice(-4)}`));
    assert.ok(!page.html.includes(credentials.auth_token), "the token is not shown");
    const [id] = accountIds(page.html, "sms");
    // Stored sealed, as the admin API stores them.
    const key = await channelAccountsKey(f.deps.config.CHANNEL_ACCOUNTS_KEY);
    const stored = await loadChannelAccounts(f.deps.sql, key, f.team.id, "sms");
    assert.deepEqual(stored.accounts.map((a) => [a.id, a.credentials.auth_token]), [[id, credentials.auth_token]]);

    const checked = await f.v.post(`/dashboard/channel-accounts/sms/${id}/check`);
    assert.equal(checked.status, 200);
    assert.match(checked.html, /SMS account 1 \(Twilio\): works/);
    assert.ok(
      twilio.requests.some((r) => r.method === "GET" && r.path.endsWith(`/Accounts/${credentials.account_sid}.json`)),
    );
    assert.equal(twilio.messages.length, 0);
    assert.ok(!checked.html.includes(credentials.auth_token));
  },
);

dbTest("Check says so when the provider refuses the credentials", async () => {
  const f = await ownerFixture();
  const credentials = twilioAccount();
  await using twilio = startFakeTwilio({ accountSid: credentials.account_sid, authToken: "another token entirely" });
  await addTwilio(f.v, credentials, twilio.url);
  const [id] = accountIds((await f.v.get("/dashboard/channel-accounts")).html, "sms");
  const checked = await f.v.post(`/dashboard/channel-accounts/sms/${id}/check`);
  assert.match(checked.html, /does not work/);
  assert.match(checked.html, /Twilio refused the credentials: 401/);
});

dbTest("an edit keeps a secret left empty; accounts move up and down and are removed", async () => {
  const f = await ownerFixture();
  const twilio = twilioAccount();
  await addTwilio(f.v, twilio, "https://api.twilio.com");
  await f.v.get("/dashboard/channel-accounts/sms/new?provider=vonage");
  const vonage = { api_key: hex(8), api_secret: hex(16) };
  assert.equal((await f.v.post("/dashboard/channel-accounts/sms", { provider: "vonage", ...vonage })).status, 303);
  let ids = accountIds((await f.v.get("/dashboard/channel-accounts")).html, "sms");
  assert.equal(ids.length, 2);

  const edit = await f.v.get(`/dashboard/channel-accounts/sms/${ids[0]}/edit`);
  assert.equal(edit.status, 200);
  assert.ok(!edit.html.includes(twilio.auth_token), "the edit form does not hold the secret");
  const saved = await f.v.post(`/dashboard/channel-accounts/sms/${ids[0]}`, {
    account_sid: twilio.account_sid,
    auth_token: "",
    from: "+15005550006",
  });
  assert.equal(saved.status, 303, saved.html);
  const key = await channelAccountsKey(f.deps.config.CHANNEL_ACCOUNTS_KEY);
  let stored = await loadChannelAccounts(f.deps.sql, key, f.team.id, "sms");
  assert.deepEqual(stored.accounts[0].credentials, { ...twilio, from: "+15005550006" });

  ids = accountIds((await f.v.get("/dashboard/channel-accounts")).html, "sms");
  assert.equal((await f.v.post(`/dashboard/channel-accounts/sms/${ids[1]}/move`, { direction: "up" })).status, 303);
  stored = await loadChannelAccounts(f.deps.sql, key, f.team.id, "sms");
  assert.deepEqual(stored.accounts.map((a) => a.provider), ["vonage", "twilio"]);
  assert.equal(stored.accounts[0].credentials.api_secret, vonage.api_secret);

  ids = accountIds((await f.v.get("/dashboard/channel-accounts")).html, "sms");
  assert.equal((await f.v.post(`/dashboard/channel-accounts/sms/${ids[0]}/remove`)).status, 303);
  stored = await loadChannelAccounts(f.deps.sql, key, f.team.id, "sms");
  assert.deepEqual(stored.accounts.map((a) => a.credentials.auth_token), [twilio.auth_token]);
});

dbTest("an invalid account is not saved, and the form says why (the admin API's rules)", async () => {
  const f = await dashboardFixture();
  const v = f.visitor();
  await v.signIn(f.owner.email);
  await v.get("/dashboard/channel-accounts/sms/new?provider=twilio");
  const bad = await v.post("/dashboard/channel-accounts/sms", {
    provider: "twilio",
    account_sid: "nope",
    auth_token: "x",
  });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /account_sid must be AC followed by 32 hex digits/);
  // Loopback is a private address: refused as for webhooks (WEBHOOK_ALLOW_PRIVATE is off).
  const local = await v.post("/dashboard/channel-accounts/sms", {
    provider: "twilio",
    ...twilioAccount(),
    base_url: "http://127.0.0.1:9/",
  });
  assert.equal(local.status, 400);
  assert.match(local.html, /base_url/);
  // A provider that cannot carry the channel.
  const resend = await v.post("/dashboard/channel-accounts/sms", { provider: "resend", api_key: `re_${hex(20)}` });
  assert.equal(resend.status, 404);
  assert.deepEqual((await listChannelAccounts(f.deps.sql, f.team.id, "sms")).accounts, []);
});

dbTest("another team's account is not found: not checked, edited, moved or removed", async () => {
  const f = await ownerFixture();
  const other = await testTeam(f.deps);
  const key = await channelAccountsKey(f.deps.config.CHANNEL_ACCOUNTS_KEY);
  const credentials = twilioAccount();
  await using vonage = startFakeVonage({ apiKey: "k", apiSecret: "s" });
  const theirs = await putChannelAccounts(f.deps.sql, key, {
    teamId: other.team.id,
    channel: "sms",
    failoverOnTimeout: false,
  }, [
    { provider: "twilio", credentials },
    { provider: "vonage", credentials: { api_key: "k", api_secret: "s" }, base_url: vonage.url },
  ]);
  const [first, second] = theirs.accounts.map((a) => a.id);
  assert.equal((await f.v.get(`/dashboard/channel-accounts/sms/${first}/edit`)).status, 404);
  for (
    const [path, fields] of [
      [`${first}/check`, {}],
      [`${second}/check`, {}],
      [`${first}/remove`, {}],
      [`${second}/move`, { direction: "up" }],
      [`${first}`, { account_sid: credentials.account_sid, auth_token: "changed" }],
    ] as const
  ) {
    assert.equal((await f.v.post(`/dashboard/channel-accounts/sms/${path}`, fields)).status, 404, path);
  }
  assert.equal(vonage.requests.length, 0);
  const after = await loadChannelAccounts(f.deps.sql, key, other.team.id, "sms");
  assert.deepEqual(after.accounts.map((a) => a.id), [first, second]);
  assert.equal(after.accounts[0].credentials.auth_token, credentials.auth_token);
});

dbTest("members get the owners-only page; a forged form is refused", async () => {
  const f = await dashboardFixture();
  const member = f.visitor();
  await member.signIn(f.member.email);
  const page = await member.get("/dashboard/channel-accounts");
  assert.equal(page.status, 403);
  assert.match(page.html, /Only an owner/);
  assert.ok(!(await member.get("/dashboard/keys")).html.includes('href="/dashboard/channel-accounts"'));
  const posted = await member.post("/dashboard/channel-accounts/sms", { provider: "twilio", ...twilioAccount() });
  assert.equal(posted.status, 403);

  const owner = f.visitor();
  await owner.signIn(f.owner.email);
  assert.ok((await owner.get("/dashboard/keys")).html.includes('href="/dashboard/channel-accounts"'));
  owner.csrf = "forged-token-of-another-page";
  const forged = await owner.post("/dashboard/channel-accounts/sms", { provider: "twilio", ...twilioAccount() });
  assert.equal(forged.status, 403);
  assert.match(forged.html, /did not come from the dashboard/);
  assert.deepEqual((await listChannelAccounts(f.deps.sql, f.team.id, "sms")).accounts, []);
});

dbTest("without CHANNEL_ACCOUNTS_KEY the page explains it and offers no form; a post changes nothing", async () => {
  const f = await dashboardFixture({ CHANNEL_ACCOUNTS_KEY: undefined });
  const v = f.visitor();
  await v.signIn(f.owner.email);
  const page = await v.get("/dashboard/channel-accounts");
  assert.equal(page.status, 200);
  assert.match(page.html, /CHANNEL_ACCOUNTS_KEY/);
  assert.ok(!page.html.includes("/channel-accounts/sms/new"));
  const posted = await v.post("/dashboard/channel-accounts/sms", { provider: "twilio", ...twilioAccount() });
  assert.equal(posted.status, 503);
  assert.match(posted.html, /CHANNEL_ACCOUNTS_KEY/);
});

/** The channel's accounts as the admin API answers them. */
async function adminList(f: Awaited<ReturnType<typeof dashboardFixture>>, channel: string) {
  const res = await f.app.request(`/admin/v1/teams/${f.team.id}/channel-accounts/${channel}`, {
    headers: { Authorization: `Bearer ${f.deps.config.ADMIN_TOKEN}` },
  });
  assert.equal(res.status, 200);
  return await res.json() as { failover_on_timeout: boolean; accounts: { provider: string }[] };
}

const FAILOVER_PATH = "/dashboard/channel-accounts/sms/failover-on-timeout";

dbTest("an owner allows failover after a timeout, then forbids it; the accounts stay as they were", async () => {
  const f = await ownerFixture();
  const twilio = twilioAccount();
  await addTwilio(f.v, twilio, "https://api.twilio.com");
  let page = await f.v.get("/dashboard/channel-accounts");
  assert.match(page.html, /Failover after a timeout: <strong>not allowed<\/strong>/);
  assert.match(page.html, /the recipient get it\s+twice/);
  assert.match(page.html, /aria-label="Allow failover after a timeout for SMS"/);

  const allowed = await f.v.post(FAILOVER_PATH, { failover_on_timeout: "on" });
  assert.equal(allowed.status, 303, allowed.html);
  assert.equal((await adminList(f, "sms")).failover_on_timeout, true);
  page = await f.v.get("/dashboard/channel-accounts");
  assert.match(page.html, /Failover after a timeout: <strong>allowed<\/strong>/);
  assert.match(page.html, /aria-label="Forbid failover after a timeout for SMS"/);
  // Any other save of the channel keeps the setting.
  const ids = accountIds(page.html, "sms");
  assert.equal((await f.v.post(`/dashboard/channel-accounts/sms/${ids[0]}/move`, { direction: "up" })).status, 303);
  assert.equal((await adminList(f, "sms")).failover_on_timeout, true);

  const forbidden = await f.v.post(FAILOVER_PATH, { failover_on_timeout: "off" });
  assert.equal(forbidden.status, 303, forbidden.html);
  const listed = await adminList(f, "sms");
  assert.equal(listed.failover_on_timeout, false);
  assert.deepEqual(listed.accounts.map((a) => a.provider), ["twilio"]);
  const key = await channelAccountsKey(f.deps.config.CHANNEL_ACCOUNTS_KEY);
  const stored = await loadChannelAccounts(f.deps.sql, key, f.team.id, "sms");
  assert.deepEqual(stored.accounts.map((a) => [a.credentials, a.baseUrl]), [[twilio, "https://api.twilio.com"]]);
  assert.equal(stored.failoverOnTimeout, false);
});

dbTest("failover after a timeout: a form that names no setting is refused and changes nothing", async () => {
  const f = await ownerFixture();
  await addTwilio(f.v, twilioAccount(), "https://api.twilio.com");
  await f.v.get("/dashboard/channel-accounts");
  for (const fields of [{}, { failover_on_timeout: "yes" }] as Record<string, string>[]) {
    const res = await f.v.post(FAILOVER_PATH, fields);
    assert.equal(res.status, 400, JSON.stringify(fields));
    assert.match(res.html, /did not say whether to allow failover/);
  }
  assert.equal(
    (await f.v.post("/dashboard/channel-accounts/fax/failover-on-timeout", { failover_on_timeout: "on" })).status,
    404,
  );
  assert.equal((await adminList(f, "sms")).failover_on_timeout, false);
});

dbTest("failover after a timeout: a member cannot change it, nor can a form without the forgery token", async () => {
  const f = await ownerFixture();
  await addTwilio(f.v, twilioAccount(), "https://api.twilio.com");

  const member = f.visitor();
  await member.signIn(f.member.email);
  const byMember = await member.post(FAILOVER_PATH, { failover_on_timeout: "on" });
  assert.equal(byMember.status, 403);
  assert.match(byMember.html, /Only an owner/);

  await f.v.get("/dashboard/channel-accounts");
  const token = f.v.csrf;
  f.v.csrf = undefined;
  const missing = await f.v.post(FAILOVER_PATH, { failover_on_timeout: "on" });
  assert.equal(missing.status, 403);
  assert.match(missing.html, /did not come from the dashboard/);
  f.v.csrf = "forged-token-of-another-page";
  const forged = await f.v.post(FAILOVER_PATH, { failover_on_timeout: "on" });
  assert.equal(forged.status, 403);
  assert.match(forged.html, /did not come from the dashboard/);
  assert.equal((await adminList(f, "sms")).failover_on_timeout, false);

  // The same owner with the page's token may.
  f.v.csrf = token;
  assert.equal((await f.v.post(FAILOVER_PATH, { failover_on_timeout: "on" })).status, 303);
  assert.equal((await adminList(f, "sms")).failover_on_timeout, true);
});

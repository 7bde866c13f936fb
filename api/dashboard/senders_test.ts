import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import type { Config } from "../../shared/config.ts";
import type { Deps } from "../../shared/deps.ts";
import { startFakeResend } from "../../harness/fakes/fake_servers.ts";
import { dbTest, jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";
import { domainAnchor } from "./domains.tsx";
import { testUser, Visitor } from "./testing.ts";

/** TXT records by name, as the injected resolver answers them (none: NotFound, as Deno.resolveDns throws). */
type Dns = Map<string, string[]>;

/** A team with an owner and a member, its service resolving TXT records from `dns` (no internet needed). */
async function sendersFixture(overrides: Partial<Config> = {}) {
  const dns: Dns = new Map();
  const base = await testDeps(overrides);
  const deps: Deps = {
    ...base,
    resolveTxt: (name) => {
      const records = dns.get(name);
      if (!records) return Promise.reject(new Deno.errors.NotFound(`no TXT record for ${name}`));
      // Long values come in chunks of at most 255 characters.
      return Promise.resolve(records.map((r) => [r.slice(0, 20), r.slice(20)]));
    },
  };
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const [owner, member] = await Promise.all([testUser(deps, team.id, "owner"), testUser(deps, team.id, "member")]);
  return { deps, app, team, keys, owner, member, dns, visitor: () => new Visitor(app) };
}

/** A domain no other test uses. */
function randomDomain(): string {
  return `mail.${crypto.randomUUID().slice(0, 8)}.example.com`;
}

/** An email send from `from` through the API; its status. */
async function sendFrom(f: Awaited<ReturnType<typeof sendersFixture>>, from: string): Promise<number> {
  const res = await f.app.request(
    "/api/v1/messages/send",
    jsonRequest("POST", {
      recipient_type: "direct_email",
      direct_email: "to@example.com",
      from_email: from,
      subject: "S",
      content: "C",
    }, { "X-API-Key": f.keys.test }),
  );
  await res.body?.cancel();
  return res.status;
}

async function identityOf(deps: Deps, teamId: string, channel: string, id: string) {
  const [row] = await deps.sql`
    select from_address, name, countries, is_default from sender_identities
    where team_id = ${teamId} and channel = ${channel} and id = ${id}`;
  return row ? { ...row } : undefined;
}

dbTest("a member adds, edits and deletes sender identities, with countries and the channel's default", async () => {
  const f = await sendersFixture();
  const v = f.visitor();
  await v.signIn(f.member.email);
  const page = await v.get("/dashboard/senders");
  assert.equal(page.status, 200);
  assert.match(page.html, /href="\/dashboard\/senders" aria-current="page"/);
  assert.match(page.html, /<label for="countries">/);

  const added = await v.post("/dashboard/senders/identities", {
    channel: "sms",
    id: "north-america",
    from: "+14155550100",
    name: "Acme",
    countries: "us, CA",
    is_default: "on",
  });
  assert.equal(added.status, 303);
  assert.deepEqual(await identityOf(f.deps, f.team.id, "sms", "north-america"), {
    from_address: "+14155550100",
    name: "Acme",
    countries: ["US", "CA"],
    is_default: true,
  });
  const [{ defaults }] = await f.deps.sql`
    select count(*)::int as defaults from sender_identities where team_id = ${f.team.id} and channel = 'sms' and is_default`;
  assert.equal(defaults, 1, "the former default is one no more");
  const listed = await v.get("/dashboard/senders");
  assert.match(listed.html, /data-identity="sms\/north-america"/);
  assert.match(listed.html, /US, CA/);

  const edit = await v.get("/dashboard/senders/identities/sms/north-america");
  assert.equal(edit.status, 200);
  assert.match(edit.html, /value="\+14155550100"/);
  const saved = await v.post("/dashboard/senders/identities/sms/north-america", { from: "ACME", countries: "" });
  assert.equal(saved.status, 303);
  assert.deepEqual(await identityOf(f.deps, f.team.id, "sms", "north-america"), {
    from_address: "ACME",
    name: null,
    countries: null,
    is_default: false,
  });

  const deleted = await v.post("/dashboard/senders/identities/sms/north-america/delete");
  assert.equal(deleted.status, 303);
  assert.equal(await identityOf(f.deps, f.team.id, "sms", "north-america"), undefined);
  assert.equal((await v.get("/dashboard/senders/identities/sms/north-america")).status, 404);
});

dbTest("sender forms refuse what the admin API refuses: a bad address or country, a taken id", async () => {
  const f = await sendersFixture();
  const v = f.visitor();
  await v.signIn(f.owner.email);
  const email = { channel: "email", id: "news", from: "not an address" };
  const bad = await v.post("/dashboard/senders/identities", email);
  assert.equal(bad.status, 400);
  assert.match(bad.html, /must be an email address/);
  const country = await v.post("/dashboard/senders/identities", {
    channel: "sms",
    id: "x",
    from: "X",
    countries: "USA",
  });
  assert.equal(country.status, 400);
  assert.match(country.html, /ISO 3166-1/);
  assert.equal((await v.post("/dashboard/senders/identities", { ...email, from: "news@example.com" })).status, 303);
  const taken = await v.post("/dashboard/senders/identities", { ...email, from: "other@example.com" });
  assert.equal(taken.status, 409);
  assert.equal((await identityOf(f.deps, f.team.id, "email", "news"))?.from_address, "news@example.com");
  const edit = await v.post("/dashboard/senders/identities/email/news", { from: "nope" });
  assert.equal(edit.status, 400);
  assert.match(edit.html, /role="alert"/);
});

dbTest("without Resend, a domain is verified by its TXT token, and only then can email be sent from it", async () => {
  const f = await sendersFixture({ RESEND_API_KEY: undefined });
  const domain = randomDomain();
  const v = f.visitor();
  await v.signIn(f.member.email);
  assert.equal(await sendFrom(f, `hello@${domain}`), 400);
  assert.equal((await v.post("/dashboard/senders/domains", { domain: `${domain.toUpperCase()}.` })).status, 303);
  const page = await v.get("/dashboard/senders");
  assert.ok(page.html.includes(`id="${domainAnchor(domain)}"`));
  const token = new RegExp(`<code class="wrap">(messaging-verification=[0-9a-f]+)</code>`).exec(page.html)?.[1];
  assert.ok(token, "the TXT record to publish");
  assert.match(page.html, /not verified/);

  const check = `/dashboard/senders/domains/${domain}/check`;
  assert.equal((await v.post(check)).status, 303);
  assert.match((await v.get("/dashboard/senders")).html, /Last check: No TXT record found yet/);
  f.dns.set(domain, ["v=spf1 -all"]);
  await v.post(check);
  assert.match((await v.get("/dashboard/senders")).html, /do not hold the token yet/);
  assert.equal(await sendFrom(f, `hello@${domain}`), 400);

  f.dns.set(domain, ["v=spf1 -all", token]);
  await v.post(check);
  const verified = await v.get("/dashboard/senders");
  assert.match(verified.html, /<span class="badge badge-verified">verified<\/span>/);
  assert.equal(await sendFrom(f, `hello@${domain}`), 201);

  assert.equal((await v.post(`/dashboard/senders/domains/${domain}/delete`)).status, 303);
  assert.equal(await sendFrom(f, `hello@${domain}`), 400);
  assert.equal((await v.post("/dashboard/senders/domains", { domain: "not a domain" })).status, 400);
});

dbTest(
  "with Resend, a domain goes through Resend's domains API: its records shown, its verification polled",
  async () => {
    const published = new Set<string>();
    await using resend = startFakeResend({ apiKey: "re_domains", published });
    const f = await sendersFixture({ RESEND_API_KEY: "re_domains", RESEND_BASE_URL: resend.url });
    const domain = randomDomain();
    const v = f.visitor();
    await v.signIn(f.owner.email);
    assert.equal((await v.post("/dashboard/senders/domains", { domain })).status, 303);
    assert.deepEqual(resend.requests.map((r) => [r.method, r.path]), [["POST", "/domains"]]);
    assert.deepEqual(JSON.parse(resend.requests[0].body), { name: domain });
    const page = await v.get("/dashboard/senders");
    assert.match(page.html, /Domains are verified by Resend/);
    assert.ok(page.html.includes("feedback-smtp.us-east-1.amazonses.com"), "the MX record Resend asks for");
    assert.ok(page.html.includes("resend._domainkey"), "the DKIM record");

    const check = `/dashboard/senders/domains/${domain}/check`;
    assert.equal((await v.post(check)).status, 303);
    const pending = await v.get("/dashboard/senders");
    assert.match(pending.html, /Last check: pending/);
    assert.equal(await sendFrom(f, `hello@${domain}`), 400);

    published.add(domain);
    await v.post(check);
    const done = await v.get("/dashboard/senders");
    assert.match(done.html, /Last check: verified/);
    assert.equal((done.html.match(/badge-verified/g) ?? []).length, 4, "the domain and its three records");
    assert.equal(await sendFrom(f, `hello@${domain}`), 201);
    // A pending domain is read, not asked to verify again.
    assert.deepEqual(resend.requests.map((r) => r.method + " " + r.path.replace(/[0-9a-f-]{36}/, "{id}")), [
      "POST /domains",
      "POST /domains/{id}/verify",
      "GET /domains/{id}",
      "GET /domains/{id}",
    ]);

    // Another team cannot register the same domain at Resend: Resend's refusal is shown.
    const other = await testTeam(f.deps);
    const stranger = await testUser(f.deps, other.team.id, "owner");
    const s = f.visitor();
    await s.signIn(stranger.email);
    const refused = await s.post("/dashboard/senders/domains", { domain });
    assert.equal(refused.status, 400);
    assert.match(refused.html, /has been registered already/);

    assert.equal((await v.post(`/dashboard/senders/domains/${domain}/delete`)).status, 303);
    assert.equal(resend.requests.at(-1)?.method, "DELETE");
  },
);

dbTest("one team never sees or changes another team's senders or domains: every page and action is 404", async () => {
  const f = await sendersFixture({ RESEND_API_KEY: undefined });
  const domain = randomDomain();
  const o = f.visitor();
  await o.signIn(f.owner.email);
  await o.post("/dashboard/senders/identities", { channel: "sms", id: "theirs", from: "THEIRS" });
  await o.post("/dashboard/senders/domains", { domain });
  const other = await testTeam(f.deps);
  const stranger = await testUser(f.deps, other.team.id, "owner");
  const v = f.visitor();
  await v.signIn(stranger.email);
  const page = await v.get("/dashboard/senders");
  assert.ok(!page.html.includes("THEIRS") && !page.html.includes(domain));
  assert.match(page.html, /No email domains yet/);
  assert.equal((await v.get("/dashboard/senders/identities/sms/theirs")).status, 404);
  assert.equal((await v.post("/dashboard/senders/identities/sms/theirs", { from: "MINE" })).status, 404);
  assert.equal((await v.post("/dashboard/senders/identities/sms/theirs/delete")).status, 404);
  assert.equal((await v.post(`/dashboard/senders/domains/${domain}/check`)).status, 404);
  assert.equal((await v.post(`/dashboard/senders/domains/${domain}/delete`)).status, 404);
  assert.equal((await identityOf(f.deps, f.team.id, "sms", "theirs"))?.from_address, "THEIRS");
  const [row] = await f.deps.sql`select 1 from email_domains where team_id = ${f.team.id} and domain = ${domain}`;
  assert.ok(row, "their domain is still there");
});

dbTest("a forged sender or domain post (another site, or no forgery token) is refused with 403", async () => {
  const f = await sendersFixture({ RESEND_API_KEY: undefined });
  const v = f.visitor();
  await v.signIn(f.owner.email);
  const crossSite = { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" };
  const identity = { channel: "sms", id: "forged", from: "EVIL" };
  assert.equal((await v.post("/dashboard/senders/identities", identity, crossSite)).status, 403);
  assert.equal((await v.post("/dashboard/senders/domains", { domain: "evil.example" }, crossSite)).status, 403);
  v.csrf = undefined;
  assert.equal((await v.post("/dashboard/senders/identities", identity)).status, 403);
  assert.equal(await identityOf(f.deps, f.team.id, "sms", "forged"), undefined);
  const [row] = await f.deps.sql`select 1 from email_domains where team_id = ${f.team.id}`;
  assert.equal(row, undefined);
});

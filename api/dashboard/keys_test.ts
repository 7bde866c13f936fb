import assert from "node:assert/strict";
import { keyPrefix } from "../../shared/api_keys.ts";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { dashboardFixture, testUser } from "./testing.ts";

/** The full key a page shows once, if any. */
function shownKey(html: string): string | undefined {
  return /id="new-key">([^<]+)</.exec(html)?.[1];
}

dbTest("an owner creates a key on the keys page: shown once in full, then listed by its prefix only", async () => {
  const { app, owner, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const created = await v.post("/dashboard/keys", { kind: "sk_test" });
  assert.equal(created.status, 201);
  const key = shownKey(created.html) ?? "";
  assert.ok(key.startsWith("sk_test_"), created.html);
  assert.match(created.html, /shown only this once/);
  const api = await app.request("/api/v1/contacts", { headers: { "X-API-Key": key } });
  assert.equal(api.status, 200);
  const later = await v.get("/dashboard/keys");
  assert.ok(later.html.includes(keyPrefix(key)));
  assert.ok(!later.html.includes(key));
  assert.equal(shownKey(later.html), undefined);
});

dbTest("the keys page shows each key's prefix, kind, creation and last use", async () => {
  const { app, owner, keys, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const before = await v.get("/dashboard/keys");
  for (const key of [keys.live, keys.test, keys.publishable]) assert.ok(before.html.includes(keyPrefix(key)), key);
  for (const heading of ["Prefix", "Kind", "Created", "Last used"]) assert.ok(before.html.includes(`>${heading}</th>`));
  assert.equal((before.html.match(/>Never</g) ?? []).length, 3);
  assert.equal((await app.request("/api/v1/contacts", { headers: { "X-API-Key": keys.live } })).status, 200);
  const after = await v.get("/dashboard/keys");
  assert.equal((after.html.match(/>Never</g) ?? []).length, 2);
  assert.match(after.html, /<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
});

dbTest("an owner revokes a key: it stops working at once and leaves the list", async () => {
  const { app, owner, keys, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const call = () => app.request("/api/v1/contacts", { headers: { "X-API-Key": keys.live } });
  assert.equal((await call()).status, 200);
  const res = await v.post(`/dashboard/keys/${keyPrefix(keys.live)}/revoke`);
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/dashboard/keys");
  assert.equal((await call()).status, 401);
  assert.ok(!(await v.get("/dashboard/keys")).html.includes(keyPrefix(keys.live)));
  assert.equal((await v.post(`/dashboard/keys/${keyPrefix(keys.live)}/revoke`)).status, 404);
});

dbTest("a member sees the keys but cannot create or revoke one (403)", async () => {
  const { app, deps, team, member, keys, visitor } = await dashboardFixture();
  const v = visitor();
  const page = await v.signIn(member.email);
  assert.equal(page.status, 200);
  assert.ok(page.html.includes(keyPrefix(keys.live)));
  assert.ok(!page.html.includes('action="/dashboard/keys"'));
  assert.ok(!page.html.includes("/revoke"));
  assert.ok(!page.html.includes('href="/dashboard/team"'));
  const create = await v.post("/dashboard/keys", { kind: "sk_live" });
  assert.equal(create.status, 403);
  assert.match(create.html, /Only an owner/);
  assert.equal((await v.post(`/dashboard/keys/${keyPrefix(keys.live)}/revoke`)).status, 403);
  const [{ n }] = await deps
    .sql`select count(*)::int as n from api_keys where team_id = ${team.id} and revoked_at is null`;
  assert.equal(n, 3);
  assert.equal((await app.request("/api/v1/contacts", { headers: { "X-API-Key": keys.live } })).status, 200);
});

dbTest("one team's owner never sees or revokes another team's keys", async () => {
  const { app, deps, keys, visitor } = await dashboardFixture();
  const other = await testTeam(deps);
  const stranger = await testUser(deps, other.team.id, "owner");
  const v = visitor();
  const page = await v.signIn(stranger.email);
  assert.ok(page.html.includes(keyPrefix(other.keys.live)));
  for (const key of [keys.live, keys.test, keys.publishable]) assert.ok(!page.html.includes(keyPrefix(key)));
  const revoke = await v.post(`/dashboard/keys/${keyPrefix(keys.live)}/revoke`);
  assert.equal(revoke.status, 404);
  assert.equal((await app.request("/api/v1/contacts", { headers: { "X-API-Key": keys.live } })).status, 200);
});

dbTest("a team without keys gets an empty state that says to create one first", async () => {
  const { owner, member, keys, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  for (const key of [keys.live, keys.test, keys.publishable]) {
    assert.equal((await v.post(`/dashboard/keys/${keyPrefix(key)}/revoke`)).status, 303);
  }
  const empty = await v.get("/dashboard/keys");
  assert.match(empty.html, /No API keys yet/);
  assert.match(empty.html, /Create a key below/);
  assert.ok(!empty.html.includes("<table"));
  const m = visitor();
  assert.match((await m.signIn(member.email)).html, /Ask an owner of your team to create one/);
});

dbTest("the stylesheet is served by the service under a hashed name, cacheable for good", async () => {
  const { owner, visitor } = await dashboardFixture();
  const v = visitor();
  const page = await v.signIn(owner.email);
  const href = /<link rel="stylesheet" href="([^"]+)"/.exec(page.html)?.[1];
  assert.match(href ?? "", /^\/dashboard\/assets\/dashboard-[0-9a-f]{12}\.css$/);
  const css = await v.get(href!);
  assert.equal(css.status, 200);
  assert.match(css.headers.get("content-type") ?? "", /text\/css/);
  assert.match(css.headers.get("cache-control") ?? "", /immutable/);
  assert.match(css.html, /:focus-visible/);
  assert.ok(!/https?:\/\//.test(page.html.replace(/http:\/\/localhost/g, "")), "no asset from elsewhere");
});

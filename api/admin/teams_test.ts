import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { keyPrefix } from "../../shared/api_keys.ts";
import { MAX_ID_LENGTH } from "../../shared/http/schemas.ts";
import { dbTest, jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";

const TOKEN = { Authorization: "Bearer test-admin-token-0123456789" };

async function setup() {
  const deps = await testDeps();
  return { deps, app: createService(deps) };
}

dbTest("admin routes answer 401 'Invalid admin token' without the right bearer token", async () => {
  const { app, deps } = await setup();
  const { team, keys } = await testTeam(deps);
  const expected = {
    statusCode: 401,
    message: "Invalid admin token",
    error: "Unauthorized",
    code: "invalid_admin_token",
  };
  const attempts: Record<string, string>[] = [
    {},
    { Authorization: "Bearer wrong-token-0123456789abcd" },
    { Authorization: "test-admin-token-0123456789" },
    { Authorization: "Basic test-admin-token-0123456789" },
    { Authorization: "Bearer " },
    { "X-API-Key": keys.live },
  ];
  for (const headers of attempts) {
    const res = await app.request(`/admin/v1/teams/${team.id}/wallet`, { headers });
    assert.equal(res.status, 401, JSON.stringify(headers));
    assert.deepEqual(await res.json(), expected);
  }
  const post = await app.request("/admin/v1/teams", jsonRequest("POST", { name: "x" }));
  assert.equal(post.status, 401);
  assert.equal((await app.request("/healthz")).status, 200);
});

dbTest("admin routes accept the token whatever the case of 'Bearer'", async () => {
  const { app, deps } = await setup();
  const { team } = await testTeam(deps);
  const res = await app.request(`/admin/v1/teams/${team.id}/wallet`, {
    headers: { Authorization: "bearer test-admin-token-0123456789" },
  });
  assert.equal(res.status, 200);
});

dbTest("admin routes refuse every token when ADMIN_TOKEN is unset", async () => {
  const deps = await testDeps({ ADMIN_TOKEN: undefined });
  const app = createService(deps);
  const res = await app.request("/admin/v1/outbox", { headers: { Authorization: "Bearer " } });
  assert.equal(res.status, 401);
  const other = await app.request("/admin/v1/outbox", { headers: { Authorization: "Bearer undefined" } });
  assert.equal(other.status, 401);
});

dbTest("POST /admin/v1/teams creates a team whose keys work at once", async () => {
  const { app } = await setup();
  const res = await app.request("/admin/v1/teams", jsonRequest("POST", { name: "Acme" }, TOKEN));
  assert.equal(res.status, 201);
  const body = await res.json();
  assert.equal(body.team.name, "Acme");
  assert.equal(body.team.plan, "pro");
  assert.match(body.team.id, /^[0-9a-f-]{36}$/);
  assert.match(body.keys.live, /^sk_live_[0-9A-Za-z]{32}$/);
  assert.match(body.keys.test, /^sk_test_[0-9A-Za-z]{32}$/);
  assert.match(body.keys.publishable, /^pk_live_[0-9A-Za-z]{32}$/);
  const contacts = await app.request("/api/v1/contacts", { headers: { "X-API-Key": body.keys.live } });
  assert.notEqual(contacts.status, 401);
  const wallet = await app.request(`/admin/v1/teams/${body.team.id}/wallet`, { headers: TOKEN });
  assert.deepEqual(await wallet.json(), { balance: 0, currency: "USD", transactions: [] });
});

dbTest("POST /admin/v1/teams takes a plan and refuses an unknown one or a missing name", async () => {
  const { app } = await setup();
  const res = await app.request("/admin/v1/teams", jsonRequest("POST", { name: "Big", plan: "enterprise" }, TOKEN));
  assert.equal(res.status, 201);
  assert.equal((await res.json()).team.plan, "enterprise");
  const bad = await app.request("/admin/v1/teams", jsonRequest("POST", { name: "Big", plan: "gold" }, TOKEN));
  assert.equal(bad.status, 400);
  assert.deepEqual((await bad.json()).message, ["plan must be one of: free, pro, plus, enterprise"]);
  const noName = await app.request("/admin/v1/teams", jsonRequest("POST", {}, TOKEN));
  assert.equal(noName.status, 400);
  assert.deepEqual((await noName.json()).message, ["name should not be empty"]);
});

dbTest("POST /admin/v1/teams/{id}/keys creates a working key of each kind", async () => {
  const { app, deps } = await setup();
  const { team } = await testTeam(deps);
  const expected = {
    live: /^sk_live_/,
    test: /^sk_test_/,
    publishable: /^pk_live_/,
    publishable_test: /^pk_test_/,
  };
  for (const [kind, pattern] of Object.entries(expected)) {
    const res = await app.request(`/admin/v1/teams/${team.id}/keys`, jsonRequest("POST", { kind }, TOKEN));
    assert.equal(res.status, 201);
    const { key, prefix } = await res.json();
    assert.match(key, pattern);
    assert.ok(key.startsWith(prefix) && prefix.length < key.length);
    // A publishable key may create a contact but nothing else; either way it is not refused as unknown.
    const use = await app.request("/api/v1/contacts", jsonRequest("POST", {}, { "X-API-Key": key }));
    assert.notEqual(use.status, 401);
    const list = await app.request("/api/v1/contacts", { headers: { "X-API-Key": key } });
    assert.equal(list.status, kind.startsWith("publishable") ? 403 : 200, kind);
  }
  const bad = await app.request(`/admin/v1/teams/${team.id}/keys`, jsonRequest("POST", { kind: "root" }, TOKEN));
  assert.equal(bad.status, 400);
  assert.deepEqual((await bad.json()).message, ["kind must be one of: live, test, publishable, publishable_test"]);
});

dbTest("admin routes of an unknown or malformed team id are 404 'Team not found'", async () => {
  const { app } = await setup();
  for (const id of [crypto.randomUUID(), "not-a-uuid"]) {
    const requests: [string, RequestInit][] = [
      [`/admin/v1/teams/${id}/keys`, jsonRequest("POST", { kind: "live" }, TOKEN)],
      [`/admin/v1/teams/${id}/wallet/topup`, jsonRequest("POST", { amount: 5 }, TOKEN)],
      [`/admin/v1/teams/${id}/wallet`, { headers: TOKEN }],
    ];
    for (const [path, init] of requests) {
      const res = await app.request(path, init);
      assert.equal(res.status, 404, path);
      assert.deepEqual(await res.json(), {
        statusCode: 404,
        message: "Team not found",
        error: "Not Found",
        code: "team_not_found",
      });
    }
  }
});

dbTest("DELETE /admin/v1/keys/{prefix} revokes the key at once, even after it was used", async () => {
  const { app, deps } = await setup();
  const { team, keys } = await testTeam(deps);
  const headers = { "X-API-Key": keys.live };
  // The first use puts the key in the look-up cache.
  assert.notEqual((await app.request("/api/v1/contacts", { headers })).status, 401);
  const created = await app.request(`/admin/v1/teams/${team.id}/keys`, jsonRequest("POST", { kind: "live" }, TOKEN));
  const other = (await created.json()).key;

  const prefix = keys.live.slice(0, 14);
  const res = await app.request(`/admin/v1/keys/${prefix}`, { method: "DELETE", headers: TOKEN });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { revoked: true, prefix });

  const after = await app.request("/api/v1/contacts", { headers });
  assert.equal(after.status, 401);
  assert.equal((await after.json()).message, "Invalid API key");
  // The team's other keys keep working.
  assert.notEqual((await app.request("/api/v1/contacts", { headers: { "X-API-Key": other } })).status, 401);

  const again = await app.request(`/admin/v1/keys/${prefix}`, { method: "DELETE", headers: TOKEN });
  assert.equal(again.status, 404);
  assert.deepEqual(await again.json(), {
    statusCode: 404,
    message: "API key not found",
    error: "Not Found",
    code: "api_key_not_found",
  });
});

dbTest("wallet top-ups add up and the wallet shows them newest first", async () => {
  const { app, deps } = await setup();
  const { team } = await testTeam(deps);
  const path = `/admin/v1/teams/${team.id}/wallet`;
  const first = await app.request(`${path}/topup`, jsonRequest("POST", { amount: 10.5 }, TOKEN));
  assert.equal(first.status, 200);
  assert.deepEqual(await first.json(), { balance: 10.5 });
  const second = await app.request(`${path}/topup`, jsonRequest("POST", { amount: 0.25 }, TOKEN));
  assert.deepEqual(await second.json(), { balance: 10.75 });

  const res = await app.request(path, { headers: TOKEN });
  assert.equal(res.status, 200);
  const wallet = await res.json();
  assert.equal(wallet.balance, 10.75);
  assert.equal(wallet.currency, "USD");
  assert.deepEqual(
    wallet.transactions.map((t: { kind: string; amount: number; balance_after: number }) => [
      t.kind,
      t.amount,
      t.balance_after,
    ]),
    [["topup", 0.25, 10.75], ["topup", 10.5, 10.5]],
  );
  assert.match(wallet.transactions[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const limited = await app.request(`${path}?limit=1`, { headers: TOKEN });
  assert.equal((await limited.json()).transactions.length, 1);
});

dbTest("a wallet top-up that is not a positive amount of at least one micro-dollar is 400", async () => {
  const { app, deps } = await setup();
  const { team } = await testTeam(deps);
  for (const amount of [0, -5, "10", null, 0.0000004]) {
    const res = await app.request(`/admin/v1/teams/${team.id}/wallet/topup`, jsonRequest("POST", { amount }, TOKEN));
    assert.equal(res.status, 400, String(amount));
  }
  const tiny = await app.request(
    `/admin/v1/teams/${team.id}/wallet/topup`,
    jsonRequest("POST", { amount: 1e-7 }, TOKEN),
  );
  assert.deepEqual((await tiny.json()).message, ["amount must not be less than 0.000001"]);
  const wallet = await app.request(`/admin/v1/teams/${team.id}/wallet`, { headers: TOKEN });
  assert.equal((await wallet.json()).balance, 0);
});

dbTest("the admin routes are in the OpenAPI document under the Admin tag with bearer security", async () => {
  const { app } = await setup();
  const doc = await (await app.request("/api/v1/openapi.json")).json();
  const topup = doc.paths["/admin/v1/teams/{team_id}/wallet/topup"].post;
  assert.deepEqual(topup.tags, ["Admin"]);
  assert.deepEqual(topup.security, [{ AdminToken: [] }]);
  assert.equal(doc.components.securitySchemes.AdminToken.scheme, "bearer");
  assert.ok(doc.paths["/admin/v1/teams/{team_id}/templates/whatsapp/{key}"].put);
  assert.ok(doc.paths["/admin/v1/outbox"].delete);
});

dbTest("an admin team id over 255 characters is 400; up to 255 it is 404 'Team not found'", async () => {
  const { app } = await setup();
  const over = await app.request(`/admin/v1/teams/${"t".repeat(MAX_ID_LENGTH + 1)}/wallet`, { headers: TOKEN });
  assert.equal(over.status, 400);
  assert.deepEqual((await over.json()).message, [`team_id must be at most ${MAX_ID_LENGTH} characters`]);
  const at = await app.request(`/admin/v1/teams/${"t".repeat(MAX_ID_LENGTH)}/wallet`, { headers: TOKEN });
  assert.equal(at.status, 404);
  assert.equal((await at.json()).message, "Team not found");
});

dbTest("GET /admin/v1/teams lists teams with their keys' prefixes, so lost keys can be replaced", async () => {
  const { app, deps } = await setup();
  const { team, keys } = await testTeam(deps);
  const contact = await app.request(
    "/api/v1/contacts",
    jsonRequest("POST", { email: `kept.${team.id}@example.com` }, { "X-API-Key": keys.live }),
  );
  assert.equal(contact.status, 201);
  const listed = async () => {
    const res = await app.request("/admin/v1/teams?limit=1000", { headers: TOKEN });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.page, 1);
    assert.equal(body.limit, 1000);
    assert.ok(body.total >= body.teams.length);
    return body.teams.find((t: { id: string }) => t.id === team.id);
  };
  const found = await listed();
  assert.deepEqual({ ...found, keys: undefined, created_at: undefined }, {
    id: team.id,
    name: team.name,
    plan: team.plan,
    keys: undefined,
    created_at: undefined,
  });
  assert.match(found.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const prefixes = found.keys.map((k: { prefix: string }) => k.prefix).sort();
  assert.deepEqual(prefixes, [keys.live, keys.test, keys.publishable].map(keyPrefix).sort());
  assert.ok(found.keys.every((k: { revoked_at: null; created_at: string }) => k.revoked_at === null && k.created_at));
  // The operator issues a new live key for the team found and revokes the lost one: the data stays.
  const issued = await app.request(`/admin/v1/teams/${team.id}/keys`, jsonRequest("POST", { kind: "live" }, TOKEN));
  const { key, prefix } = await issued.json();
  const lost = found.keys.find((k: { kind: string }) => k.kind === "sk_live").prefix;
  assert.equal((await app.request(`/admin/v1/keys/${lost}`, { method: "DELETE", headers: TOKEN })).status, 200);
  const contacts = await app.request("/api/v1/contacts", { headers: { "X-API-Key": key } });
  assert.equal(contacts.status, 200);
  assert.equal((await contacts.json()).data.length, 1);
  const after = await listed();
  assert.ok(after.keys.some((k: { prefix: string; revoked_at: null }) => k.prefix === prefix && k.revoked_at === null));
  assert.ok(after.keys.find((k: { prefix: string }) => k.prefix === lost).revoked_at);
  assert.equal((await app.request("/admin/v1/teams")).status, 401);
  assert.equal((await app.request("/admin/v1/teams?limit=0", { headers: TOKEN })).status, 400);
});

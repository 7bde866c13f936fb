import assert from "node:assert/strict";
import { dbTest, jsonRequest, testTeam } from "../../shared/testing.ts";
import { caller, contactsFixture, createdContact } from "./testing.ts";

const FCM = "fcm-token-" + "y".repeat(40);
const change = { preferences: [{ channel: "email", category: "promotional", subscribed: true }] };

/** Every call that names one contact, by `{id}` (id or external id) or `/external/{external_id}`. */
function callsNaming(ref: string, external: string): [string, string, unknown?][] {
  return [
    ["GET", `/${ref}`],
    ["PUT", `/${ref}`, { first_name: "Mallory" }],
    ["PATCH", `/${ref}`, { first_name: "Mallory" }],
    ["GET", `/external/${external}`],
    ["PATCH", `/external/${external}`, { first_name: "Mallory" }],
    ["GET", `/${ref}/preferences`],
    ["PATCH", `/${ref}/preferences`, change],
    ["PUT", `/${ref}/preferences`, change],
    ["PATCH", `/${ref}/preferences/email/promotional`, { subscribed: true }],
    ["DELETE", `/${ref}/preferences/email`],
    ["DELETE", `/${ref}/preferences`],
    ["POST", `/${ref}/preferences/subscribe-all`],
    ["GET", `/external/${external}/preferences`],
    ["PATCH", `/external/${external}/preferences`, change],
    ["DELETE", `/external/${external}/preferences`],
    ["POST", `/external/${external}/preferences/subscribe-all`],
    ["POST", `/${ref}/tags`, { tags: ["pwned"] }],
    ["DELETE", `/${ref}/tags`, { tags: ["keep"] }],
    ["POST", `/external/${external}/tags`, { tags: ["pwned"] }],
    ["POST", `/${ref}/unsubscribe`],
    ["POST", `/external/${external}/unsubscribe`],
    ["PATCH", `/external/${external}/device-token`, { token: FCM, platform: "android" }],
    ["DELETE", `/${ref}`],
    ["DELETE", `/external/${external}`],
  ];
}

dbTest("another team's key gets 404 on every endpoint naming a contact, and changes nothing", async () => {
  const { call, deps, app } = await contactsFixture();
  const victim = await createdContact(call, { tags: ["keep"] });
  const other = caller(app, (await testTeam(deps)).keys.live);
  for (const ref of [victim.id, victim.external_id]) {
    for (const [method, path, body] of callsNaming(ref, victim.external_id)) {
      const res = await other(method, path, body);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.message, "Contact not found", `${method} ${path}`);
    }
  }
  const after = await call("GET", `/${victim.id}`);
  assert.deepEqual(after.body, victim);
});

dbTest("another team's key cannot list, search or filter to a contact", async () => {
  const { call, deps, app } = await contactsFixture();
  const victim = await createdContact(call, { tags: ["secret"] });
  const other = caller(app, (await testTeam(deps)).keys.live);
  const queries = [
    "",
    "?tag=secret",
    `?search=${encodeURIComponent(victim.email)}`,
    `?email=${encodeURIComponent(victim.email)}`,
    "?page=1&limit=100",
  ];
  for (const query of queries) {
    const res = await other("GET", query);
    assert.equal(res.status, 200, query);
    assert.deepEqual(res.body.data, [], query);
  }
  const cursor = await other("GET", `?starting_after=${victim.id}`);
  assert.equal(cursor.status, 400);
});

dbTest("two teams may hold the same email and external id, and each sees its own", async () => {
  const { call, deps, app } = await contactsFixture();
  const mine = await createdContact(call, { external_id: "shared-id" });
  const other = caller(app, (await testTeam(deps)).keys.live);
  const theirs = await other("POST", "", { email: mine.email, external_id: "shared-id" });
  assert.equal(theirs.status, 201);
  const bulk = await other("POST", "/bulk", { contacts: [{ email: mine.email.toUpperCase() }] });
  assert.equal(bulk.body.summary.skipped_count, 1);
  assert.equal((await call("GET", "/shared-id")).body.id, mine.id);
  assert.equal((await other("GET", "/external/shared-id")).body.id, theirs.body.id);
  assert.deepEqual((await other("DELETE", "/external/shared-id")).body, { deleted: true, id: theirs.body.id });
  assert.equal((await call("GET", "/external/shared-id")).status, 200);
});

dbTest("a publishable key gets 403 'Insufficient permissions' outside its preference-centre scope", async () => {
  const { call, publishable } = await contactsFixture();
  const c = await createdContact(call);
  const denied: [string, string, unknown?][] = [
    ["GET", ""],
    ["GET", `?search=${encodeURIComponent(c.email)}`],
    ["PUT", `/${c.id}`, { first_name: "X" }],
    ["PATCH", `/${c.id}`, { first_name: "X" }],
    ["PATCH", `/external/${c.external_id}`, { first_name: "X" }],
    ["DELETE", `/${c.id}`],
    ["DELETE", `/external/${c.external_id}`],
    ["POST", "/bulk", { contacts: [{ email: "x@example.com" }] }],
    ["POST", `/${c.id}/tags`, { tags: ["x"] }],
    ["DELETE", `/${c.id}/tags`, { tags: ["x"] }],
    ["POST", `/${c.id}/unsubscribe`],
    ["POST", `/external/${c.external_id}/unsubscribe`],
  ];
  for (const [method, path, body] of denied) {
    const res = await publishable(method, path, body);
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.deepEqual(res.body, {
      statusCode: 403,
      message: "Insufficient permissions",
      error: "Forbidden",
      code: "insufficient_permissions",
    });
    // Counted against the key's hourly limit like any of its requests, with the headers to show it.
    assert.ok(Number(res.headers.get("x-ratelimit-limit")) > 0, "X-RateLimit-Limit");
    assert.ok(res.headers.get("x-ratelimit-remaining"), "X-RateLimit-Remaining");
  }
  assert.deepEqual((await call("GET", `/${c.id}`)).body, c);
  const allowed = await publishable("GET", `/external/${c.external_id}/preferences`);
  assert.equal(allowed.status, 200);
});

dbTest("a publishable key cannot send, read triggers, workflows, webhooks or templates", async () => {
  const { app, keys } = await contactsFixture();
  const denied: [string, string][] = [
    ["POST", "/api/v1/sms/send"],
    ["POST", "/api/v1/push/send"],
    ["POST", "/api/v1/messages/send"],
    ["POST", "/api/v1/messages/trigger"],
    ["GET", `/api/v1/triggers/${crypto.randomUUID()}`],
    ["GET", "/api/v1/workflows"],
    ["POST", "/api/v1/workflows/trigger"],
    ["GET", "/api/v1/webhooks"],
    ["GET", "/api/v1/templates?template_key=welcome"],
  ];
  for (const [method, path] of denied) {
    const res = await app.request(
      path,
      jsonRequest(method, method === "POST" ? {} : undefined, {
        "X-API-Key": keys.publishable,
      }),
    );
    assert.equal(res.status, 403, `${method} ${path}`);
  }
});

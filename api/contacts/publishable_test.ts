import assert from "node:assert/strict";
import { contactToken } from "../../shared/contact_tokens.ts";
import { dbTest, jsonRequest, randomEmail } from "../../shared/testing.ts";
import { type Answer, contactsFixture, createdContact } from "./testing.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789" };
const FCM = "fcm:APA91b-" + "q".repeat(140);
const change = { preferences: [{ channel: "email", category: "promotional", subscribed: true }] };

/** A contacts fixture with contact tokens turned on through the admin API; its secret and a token maker. */
async function tokensFixture() {
  const f = await contactsFixture();
  const res = await f.app.request(`/admin/v1/teams/${f.team.id}/contact-tokens`, { method: "POST", headers: ADMIN });
  assert.equal(res.status, 201);
  const { secret } = await res.json();
  const event = async (body: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await f.app.request(
      "/api/v1/events/send",
      jsonRequest("POST", body, { "X-API-Key": f.keys.publishable, "X-Team-ID": f.team.id, ...headers }),
    );
    return { status: res.status, body: await res.json(), headers: res.headers };
  };
  return { ...f, secret, event, tokenOf: (externalId: string) => contactToken(secret, externalId) };
}

/** Every publishable-key call about the contact `c` (by id and by external id), with a body where one is needed. */
function callsAbout(c: { id: string; external_id: string }): [string, string, unknown?][] {
  return [
    ["GET", `/${c.id}`],
    ["GET", `/external/${c.external_id}`],
    ["GET", `/${c.id}/preferences`],
    ["GET", `/external/${c.external_id}/preferences`],
    ["PATCH", `/${c.id}/preferences`, change],
    ["PATCH", `/external/${c.external_id}/preferences`, change],
    ["PATCH", `/${c.id}/preferences/push/promotional`, { subscribed: true }],
    ["POST", `/external/${c.external_id}/preferences/subscribe-all`],
    ["PATCH", `/external/${c.external_id}/device-token`, { token: FCM, platform: "ios" }],
  ];
}

dbTest("a publishable key reads one contact with its preferences, changes them and registers devices", async () => {
  const { call, publishable } = await contactsFixture();
  const c = await createdContact(call);
  const byId = await publishable("GET", `/${c.id}`);
  assert.equal(byId.status, 200);
  assert.deepEqual(byId.body, c);
  assert.deepEqual((await publishable("GET", `/external/${c.external_id}`)).body, c);
  const changed = await publishable("PATCH", `/${c.id}/preferences`, change);
  assert.equal(changed.body.preferences.email.promotional, true);
  const device = await publishable("PATCH", `/external/${c.external_id}/device-token`, {
    token: FCM,
    platform: "ios",
  });
  assert.equal(device.status, 200);
  assert.deepEqual(device.body.device_tokens.map((d: { token: string }) => d.token), [FCM]);
  assert.equal((await publishable("GET", `/${crypto.randomUUID()}`)).status, 404);
});

dbTest("with contact tokens on, a publishable key reaches a contact only with its X-Contact-Token", async () => {
  const { call, publishable, tokenOf } = await tokensFixture();
  const c = await createdContact(call);
  const other = await createdContact(call);
  const mine = { "X-Contact-Token": await tokenOf(c.external_id) };
  const theirs = { "X-Contact-Token": await tokenOf(other.external_id) };
  for (const [method, path, body] of callsAbout(c)) {
    const missing = await publishable(method, path, body);
    assert.equal(missing.status, 401, `${method} ${path}`);
    assert.deepEqual(missing.body, {
      statusCode: 401,
      message: "Missing X-Contact-Token: this team requires a contact token with publishable keys",
      error: "Unauthorized",
      code: "contact_token_required",
    });
    for (const headers of [theirs, { "X-Contact-Token": "not-a-token" }]) {
      const wrong = await publishable(method, path, body, headers);
      assert.equal(wrong.status, 401, `${method} ${path}`);
      assert.equal(wrong.body.message, "Invalid X-Contact-Token for this contact");
      assert.equal(wrong.body.code, "invalid_contact_token");
    }
    const right = await publishable(method, path, body, mine);
    assert.equal(right.status, 200, `${method} ${path}: ${JSON.stringify(right.body)}`);
  }
  // Nothing of the other contact changed; a secret key needs no token.
  const untouched = await call("GET", `/${other.id}`);
  assert.equal(untouched.status, 200);
  assert.deepEqual(untouched.body.preferences, other.preferences);
});

dbTest("with contact tokens on, an unknown contact answers 401 like another's, so tokens reveal nothing", async () => {
  const { publishable, tokenOf } = await tokensFixture();
  const ghost = crypto.randomUUID();
  const someone = { "X-Contact-Token": await tokenOf("someone") };
  for (const path of [`/${ghost}`, `/external/${ghost}`, `/${ghost}/preferences`]) {
    assert.equal((await publishable("GET", path, undefined, someone)).status, 401, path);
  }
  // With the token of the reference itself, the route answers: there is no such contact.
  const own = await publishable("GET", `/${ghost}`, undefined, { "X-Contact-Token": await tokenOf(ghost) });
  assert.equal(own.status, 404);
});

dbTest("with contact tokens on, a publishable key creates only the contact its token names", async () => {
  const { publishable, tokenOf } = await tokensFixture();
  const body = { email: randomEmail(), external_id: "new-user", fcm_token: FCM };
  assert.equal((await publishable("POST", "", body)).status, 401);
  const stranger = await publishable("POST", "", body, { "X-Contact-Token": await tokenOf("someone-else") });
  assert.equal(stranger.status, 401);
  const noId = await publishable("POST", "", { email: randomEmail() }, {
    "X-Contact-Token": await tokenOf("new-user"),
  });
  assert.equal(noId.status, 401);
  assert.equal(noId.body.message, "Cannot check X-Contact-Token: the request names no contact by external id");
  const created = await publishable("POST", "", body, { "X-Contact-Token": await tokenOf("new-user") });
  assert.equal(created.status, 201);
  assert.equal(created.body.external_id, "new-user");
});

dbTest("with contact tokens on, an event needs the token of the contact it would reach", async () => {
  const { call, event, tokenOf } = await tokensFixture();
  const bob = await createdContact(call);
  const event_name = "no_such_event";
  assert.equal((await event({ event_name, user_info: { contact_external_id: bob.external_id } })).status, 401);
  const named = { "X-Contact-Token": await tokenOf(bob.external_id) };
  assert.equal((await event({ event_name }, named)).status, 401);
  // Past the token check, the event meets the event-type check.
  const passed = await event({ event_name, user_info: { contact_external_id: bob.external_id } }, named);
  assert.equal(passed.status, 404);
  assert.equal(passed.body.message, "Event type not found");
  // A token of an external id no contact has cannot reach Bob through his email.
  const ghost = { contact_external_id: "ghost", email: bob.email.toUpperCase() };
  const viaEmail = await event({ event_name, user_info: ghost }, { "X-Contact-Token": await tokenOf("ghost") });
  assert.equal(viaEmail.status, 401);
  assert.equal((await event({ event_name, user_info: ghost }, named)).status, 404);
});

dbTest("turning contact tokens off, or on again with a new secret, takes effect on the next request", async () => {
  const { app, team, call, publishable, tokenOf } = await tokensFixture();
  const c = await createdContact(call);
  const old = { "X-Contact-Token": await tokenOf(c.external_id) };
  assert.equal((await publishable("GET", `/${c.id}`, undefined, old)).status, 200);
  const path = `/admin/v1/teams/${team.id}/contact-tokens`;
  const renewed = await app.request(path, { method: "POST", headers: ADMIN });
  const { secret } = await renewed.json();
  assert.equal((await publishable("GET", `/${c.id}`, undefined, old)).status, 401);
  const fresh = { "X-Contact-Token": await contactToken(secret, c.external_id) };
  assert.equal((await publishable("GET", `/${c.id}`, undefined, fresh)).status, 200);
  assert.equal((await app.request(path, { method: "DELETE", headers: ADMIN })).status, 200);
  assert.equal((await publishable("GET", `/${c.id}`)).status, 200);
});

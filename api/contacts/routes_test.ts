import assert from "node:assert/strict";
import { MAX_ID_LENGTH } from "../../shared/http/schemas.ts";
import { dbTest, randomEmail } from "../../shared/testing.ts";
import { contactsFixture, createdContact, randomContact } from "./testing.ts";

const DEFAULT_PREFERENCES = {
  email: { transactional: true, promotional: false },
  sms: { transactional: true, promotional: true },
  whatsapp: { transactional: true, promotional: false },
  push: { transactional: true, promotional: false },
};
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

dbTest("POST /contacts answers 201 with the whole contact, defaults and created_via metadata", async () => {
  const { call, team } = await contactsFixture();
  const input = randomContact({ tags: ["vip"], custom_fields: { phone: "+15550001111" }, metadata: { source: "web" } });
  const res = await call("POST", "", input, { "X-Team-ID": team.id });
  assert.equal(res.status, 201);
  const c = res.body;
  assert.match(c.id, /^[0-9a-f-]{36}$/);
  assert.equal(c.email, input.email);
  assert.equal(c.external_id, input.external_id);
  assert.equal(c.first_name, "Ada");
  assert.equal(c.last_name, "Lovelace");
  assert.deepEqual(c.tags, ["vip"]);
  assert.equal(c.is_active, true);
  assert.equal(c.is_unsubscribed, false);
  assert.equal(c.unsubscribed_at, null);
  assert.deepEqual(c.custom_fields, { phone: "+15550001111" });
  assert.equal(c.metadata.source, "web");
  assert.equal(c.metadata.created_via, "api_key");
  assert.match(c.metadata.api_key_id, /^[0-9a-f-]{36}$/);
  assert.deepEqual(c.preferences, DEFAULT_PREFERENCES);
  assert.match(c.created_at, ISO_MS);
  assert.match(c.updated_at, ISO_MS);
  assert.equal(c.team_id, undefined);
});

dbTest("POST /contacts with only an email generates an auto_gen_ external id and null names", async () => {
  const { call } = await contactsFixture();
  const res = await call("POST", "", { email: "solo@example.com" });
  assert.equal(res.status, 201);
  assert.match(res.body.external_id, /^auto_gen_[0-9a-f-]{36}$/);
  assert.equal(res.body.first_name, null);
  assert.equal(res.body.last_name, null);
  assert.deepEqual(res.body.tags, []);
});

dbTest("POST /contacts refuses a duplicate email (any case) and a duplicate external_id with 409", async () => {
  const { call } = await contactsFixture();
  const first = await createdContact(call, { email: "Grace.Hopper@Example.com", external_id: "gh-1" });
  const sameEmail = await call("POST", "", { email: "grace.hopper@example.COM" });
  assert.equal(sameEmail.status, 409);
  assert.deepEqual(sameEmail.body, {
    statusCode: 409,
    message: "You already have a contact with email grace.hopper@example.COM",
    error: "Conflict",
    code: "duplicate_email",
  });
  const sameExternal = await call("POST", "", { email: "other@example.com", external_id: first.external_id });
  assert.equal(sameExternal.status, 409);
  assert.equal(sameExternal.body.message, "You already have a contact with external_id gh-1");
  assert.equal(sameExternal.body.code, "duplicate_external_id");
});

dbTest("POST /contacts without an email is 400 'Missing required field: email' with details", async () => {
  const { call, app, keys } = await contactsFixture();
  const noBody = async () => {
    const res = await app.request("/api/v1/contacts", { method: "POST", headers: { "X-API-Key": keys.live } });
    return { status: res.status, body: await res.json() };
  };
  for (const body of [{ first_name: "No" }, { email: "" }, { email: null }, "no body"]) {
    const res = body === "no body" ? await noBody() : await call("POST", "", body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.deepEqual(res.body, {
      statusCode: 400,
      message: "Missing required field: email",
      error: "Bad Request",
      code: "missing_field",
      details: { field: "email", code: "required" },
    });
  }
});

dbTest("POST /contacts with a malformed email is 400 'Invalid email format' with details", async () => {
  const { call } = await contactsFixture();
  // Over 254 characters too: such an address broke the email index (a 500).
  for (const email of ["not-an-email", "a@", "@b.com", 42, `${"a".repeat(8000)}@example.com`]) {
    const res = await call("POST", "", { email });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, "Invalid email format");
    assert.deepEqual(res.body.details, { field: "email", code: "invalid_format" });
  }
});

dbTest("POST /contacts rejects badly typed fields with one line per problem", async () => {
  const { call } = await contactsFixture();
  const res = await call("POST", "", { email: "x@example.com", tags: "vip", is_active: "yes" });
  assert.equal(res.status, 400);
  assert.deepEqual(res.body.message.sort(), ["is_active must be a boolean", "tags must be an array"]);
});

dbTest("POST /contacts with an X-Team-ID of another team is 401 'Invalid team context'", async () => {
  const { call } = await contactsFixture();
  const res = await call("POST", "", randomContact(), { "X-Team-ID": crypto.randomUUID() });
  assert.equal(res.status, 401);
  assert.equal(res.body.message, "Invalid team context");
});

dbTest("GET /contacts/{id} answers the contact by id, then by external id, else 404", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call, { external_id: "user-42" });
  const byId = await call("GET", `/${c.id}`);
  assert.equal(byId.status, 200);
  assert.deepEqual(byId.body, c);
  const byExternal = await call("GET", "/user-42");
  assert.equal(byExternal.status, 200);
  assert.equal(byExternal.body.id, c.id);
  for (const missing of [crypto.randomUUID(), "no-such-contact", "x'; drop table contacts; --", "%E2%9C%93"]) {
    const res = await call("GET", `/${missing}`);
    assert.equal(res.status, 404, missing);
    assert.deepEqual(res.body, {
      statusCode: 404,
      message: "Contact not found",
      error: "Not Found",
      code: "contact_not_found",
    });
  }
});

dbTest("GET /contacts/{id} prefers the contact with that id over one whose external id is that UUID", async () => {
  const { call } = await contactsFixture();
  const target = await createdContact(call);
  const impostor = await createdContact(call, { external_id: target.id });
  assert.equal((await call("GET", `/${target.id}`)).body.id, target.id);
  assert.equal((await call("GET", `/external/${target.id}`)).body.id, impostor.id);
});

dbTest("GET /contacts/{id} finds a contact whose external id is a UUID no contact has as id", async () => {
  const { call } = await contactsFixture();
  const externalUuid = crypto.randomUUID();
  const c = await createdContact(call, { external_id: externalUuid });
  const res = await call("GET", `/${externalUuid}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.id, c.id);
});

dbTest("GET /contacts/external/{external_id} answers by external id only", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call, { external_id: "crm-7" });
  const res = await call("GET", "/external/crm-7");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, c);
  assert.equal((await call("GET", `/external/${c.id}`)).status, 404);
});

dbTest("PATCH and PUT /contacts/{id} change only the fields given", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call, { tags: ["a"], custom_fields: { plan: "gold" } });
  const patched = await call("PATCH", `/${c.id}`, { first_name: "Augusta", tags: ["b", "c"] });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.first_name, "Augusta");
  assert.deepEqual(patched.body.tags, ["b", "c"]);
  assert.equal(patched.body.last_name, "Lovelace");
  assert.equal(patched.body.email, c.email);
  assert.deepEqual(patched.body.custom_fields, { plan: "gold" });
  assert.ok(patched.body.updated_at >= c.updated_at);
  const put = await call("PUT", `/${c.external_id}`, { custom_fields: { plan: "silver" }, last_name: null });
  assert.equal(put.status, 200);
  assert.deepEqual(put.body.custom_fields, { plan: "silver" });
  assert.equal(put.body.last_name, null);
  assert.equal(put.body.first_name, "Augusta");
  assert.deepEqual((await call("GET", `/${c.id}`)).body, put.body);
});

dbTest("PATCH /contacts/external/{external_id} updates and answers the contact", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call, { external_id: "ext-patch" });
  const res = await call("PATCH", "/external/ext-patch", { is_active: false, email: "New.Address@example.com" });
  assert.equal(res.status, 200);
  assert.equal(res.body.id, c.id);
  assert.equal(res.body.is_active, false);
  assert.equal(res.body.email, "New.Address@example.com");
  assert.equal((await call("PATCH", "/external/missing", { is_active: false })).status, 404);
});

dbTest("PATCH /contacts/{id} with is_unsubscribed sets and clears unsubscribed_at", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const off = await call("PATCH", `/${c.id}`, { is_unsubscribed: true });
  assert.equal(off.body.is_unsubscribed, true);
  assert.match(off.body.unsubscribed_at, ISO_MS);
  const on = await call("PATCH", `/${c.id}`, { is_unsubscribed: false });
  assert.equal(on.body.is_unsubscribed, false);
  assert.equal(on.body.unsubscribed_at, null);
});

dbTest("updating a contact to another contact's email or external id is 409; a bad email 400", async () => {
  const { call } = await contactsFixture();
  const a = await createdContact(call);
  const b = await createdContact(call);
  const email = await call("PATCH", `/${b.id}`, { email: a.email.toUpperCase() });
  assert.equal(email.status, 409);
  assert.equal(email.body.message, `You already have a contact with email ${a.email.toUpperCase()}`);
  const external = await call("PUT", `/${b.id}`, { external_id: a.external_id });
  assert.equal(external.status, 409);
  assert.equal(external.body.message, `You already have a contact with external_id ${a.external_id}`);
  const bad = await call("PATCH", `/${b.id}`, { email: "nope" });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.message, "Invalid email format");
  assert.equal((await call("PATCH", `/${crypto.randomUUID()}`, { first_name: "X" })).status, 404);
});

dbTest("DELETE /contacts/{id} deletes for good and answers {deleted, id}; again is 404", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const res = await call("DELETE", `/${c.id}`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { deleted: true, id: c.id });
  assert.equal((await call("GET", `/${c.id}`)).status, 404);
  const again = await call("DELETE", `/${c.id}`);
  assert.equal(again.status, 404);
  assert.equal(again.body.message, "Contact not found");
});

dbTest("DELETE /contacts/{id} accepts ?hard=true, a JSON body, and an external id", async () => {
  const { call } = await contactsFixture();
  const a = await createdContact(call);
  const hard = await call("DELETE", `/${a.id}?hard=true`, { reason: "gdpr" });
  assert.deepEqual(hard.body, { deleted: true, id: a.id });
  const b = await createdContact(call, { external_id: "del-by-external" });
  const byExternal = await call("DELETE", "/del-by-external");
  assert.deepEqual(byExternal.body, { deleted: true, id: b.id });
  assert.equal((await call("DELETE", "/not-a-uuid")).status, 404);
});

dbTest("DELETE /contacts/external/{external_id} deletes; unknown is 404", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call, { external_id: "bye" });
  assert.deepEqual((await call("DELETE", "/external/bye")).body, { deleted: true, id: c.id });
  const again = await call("DELETE", "/external/bye");
  assert.equal(again.status, 404);
  assert.equal(again.body.message, "Contact not found");
});

dbTest("a deleted contact's email and external id can be used again", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  await call("DELETE", `/${c.id}`);
  const again = await call("POST", "", { email: c.email, external_id: c.external_id });
  assert.equal(again.status, 201);
  assert.notEqual(again.body.id, c.id);
});

dbTest("the OpenAPI document describes every contact route with request and response schemas", async () => {
  const { app } = await contactsFixture();
  const doc = await (await app.request("/api/v1/openapi.json")).json();
  const expected: [string, string][] = [
    ["post", "/api/v1/contacts"],
    ["get", "/api/v1/contacts"],
    ["post", "/api/v1/contacts/bulk"],
    ["get", "/api/v1/contacts/{id}"],
    ["put", "/api/v1/contacts/{id}"],
    ["patch", "/api/v1/contacts/{id}"],
    ["delete", "/api/v1/contacts/{id}"],
    ["get", "/api/v1/contacts/external/{external_id}"],
    ["patch", "/api/v1/contacts/external/{external_id}"],
    ["delete", "/api/v1/contacts/external/{external_id}"],
    ["get", "/api/v1/contacts/external/{external_id}/preferences"],
    ["patch", "/api/v1/contacts/external/{external_id}/preferences"],
    ["get", "/api/v1/contacts/{id}/preferences"],
    ["patch", "/api/v1/contacts/{id}/preferences"],
    ["delete", "/api/v1/contacts/{id}/preferences"],
    ["delete", "/api/v1/contacts/{id}/preferences/{channel}"],
    ["patch", "/api/v1/contacts/{id}/preferences/{channel}/{category}"],
    ["post", "/api/v1/contacts/{id}/preferences/subscribe-all"],
    ["post", "/api/v1/contacts/{id}/unsubscribe"],
    ["post", "/api/v1/contacts/{id}/tags"],
    ["delete", "/api/v1/contacts/{id}/tags"],
    ["patch", "/api/v1/contacts/external/{external_id}/device-token"],
  ];
  for (const [method, path] of expected) {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method} ${path} documented`);
    const ok = op.responses["200"] ?? op.responses["201"];
    assert.ok(ok.content["application/json"].schema, `${method} ${path} response schema`);
  }
  assert.ok(doc.paths["/api/v1/contacts"].post.requestBody.content["application/json"].schema);
  assert.ok(doc.components.schemas.Contact.properties.preferences);
});

dbTest("a contact id or external_id over 255 characters in a path is 400; up to 255 it is looked up", async () => {
  const { call } = await contactsFixture();
  const long = "e".repeat(MAX_ID_LENGTH);
  const created = await createdContact(call, { external_id: long });
  for (const path of [`/external/${long}`, `/${long}`, `/external/${long}/preferences`]) {
    const res = await call("GET", path);
    assert.equal(res.status, 200, path);
  }
  for (const [path, field] of [[`/external/${long}x`, "external_id"], [`/${long}x`, "id"]]) {
    for (const [method, suffix] of [["GET", ""], ["PATCH", ""], ["DELETE", ""], ["GET", "/preferences"]]) {
      const res = await call(method, `${path}${suffix}`, method === "PATCH" ? { first_name: "x" } : undefined);
      assert.equal(res.status, 400, `${method} ${field}${suffix}`);
      assert.deepEqual(res.body.message, [`${field} must be at most ${MAX_ID_LENGTH} characters`]);
    }
  }
  assert.equal((await call("GET", `/${created.id}`)).body.external_id, long);
  assert.equal((await call("GET", `/external/${"u".repeat(MAX_ID_LENGTH)}`)).status, 404);
});

dbTest("POST /contacts refuses a custom_fields.phone over 32 characters (it is indexed for STOP replies)", async () => {
  const { call } = await contactsFixture();
  const res = await call("POST", "", { email: randomEmail(), custom_fields: { phone: "1".repeat(9_000) } });
  assert.equal(res.status, 400);
  assert.deepEqual(res.body.message, ["custom_fields.phone must be at most 32 characters"]);
  const ok = await call("POST", "", {
    email: randomEmail(),
    custom_fields: { phone: "+1 (415) 555-0100", notes: "x".repeat(9_000) },
  });
  assert.equal(ok.status, 201);
});

dbTest("POST /contacts refuses a custom field named __proto__ rather than dropping it", async () => {
  const { call } = await contactsFixture();
  const body = JSON.parse(`{"email": "${randomEmail()}", "custom_fields": {"plan": "pro", "__proto__": "x"}}`);
  const res = await call("POST", "", body);
  assert.equal(res.status, 400);
  assert.equal(res.body.code, "invalid_key");
  assert.equal(res.body.message, 'Object keys must not be "__proto__"');
});

dbTest("POST /contacts refuses an unpaired surrogate (it became U+FFFD, so two different ids met as one)", async () => {
  const { call } = await contactsFixture();
  for (
    const body of [{ email: randomEmail(), external_id: "\udc00" }, { email: randomEmail(), first_name: "A\ud800" }]
  ) {
    const res = await call("POST", "", body);
    assert.equal(res.status, 400);
    assert.equal(res.body.code, "invalid_characters");
  }
});

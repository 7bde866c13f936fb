import assert from "node:assert/strict";
import { dbTest, randomEmail } from "../../shared/testing.ts";
import { randomToken } from "../../worker/testing.ts";
import { contactsFixture, createdContact } from "./testing.ts";

const APNS = "0123456789abcdef".repeat(4);
const FCM = "fcm:APA91b-" + "x".repeat(140);

dbTest("POST …/tags adds new tags once, in order; DELETE …/tags removes them", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call, { tags: ["a", "b"] });
  const added = await call("POST", `/${c.id}/tags`, { tags: ["c", "a", "d", "c"] });
  assert.equal(added.status, 200);
  assert.deepEqual(added.body.tags, ["a", "b", "c", "d"]);
  const removed = await call("DELETE", `/${c.id}/tags`, { tags: ["b", "d", "zzz"] });
  assert.equal(removed.status, 200);
  assert.deepEqual(removed.body.tags, ["a", "c"]);
  const external = await call("POST", `/external/${c.external_id}/tags`, { tags: ["e"] });
  assert.deepEqual(external.body.tags, ["a", "c", "e"]);
  assert.deepEqual((await call("GET", `/${c.id}`)).body.tags, ["a", "c", "e"]);
});

dbTest("…/tags without tags is 400 and for an unknown contact 404", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const empty = await call("POST", `/${c.id}/tags`, { tags: [] });
  assert.equal(empty.status, 400);
  assert.deepEqual(empty.body.message, ["tags must contain at least 1 elements"]);
  assert.deepEqual((await call("DELETE", `/${c.id}/tags`, {})).body.message, ["tags should not be empty"]);
  assert.equal((await call("POST", "/nobody/tags", { tags: ["x"] })).status, 404);
  assert.equal((await call("DELETE", `/${crypto.randomUUID()}/tags`, { tags: ["x"] })).status, 404);
});

dbTest("POST …/unsubscribe sets is_unsubscribed and unsubscribed_at, with or without a JSON header", async () => {
  const { call, app, keys } = await contactsFixture();
  const c = await createdContact(call);
  const res = await call("POST", `/${c.id}/unsubscribe`);
  assert.equal(res.status, 200);
  assert.equal(res.body.is_unsubscribed, true);
  assert.ok(Date.now() - Date.parse(res.body.unsubscribed_at) < 60_000);
  const plain = await app.request(`/api/v1/contacts/external/${c.external_id}/unsubscribe`, {
    method: "POST",
    headers: { "X-API-Key": keys.live },
  });
  assert.equal(plain.status, 200);
  assert.equal((await plain.json()).unsubscribed_at, res.body.unsubscribed_at);
  const got = await call("GET", `/${c.id}`);
  assert.equal(got.body.is_unsubscribed, true);
  assert.equal((await call("POST", "/nobody/unsubscribe")).status, 404);
});

dbTest("POST /contacts/bulk creates, skips duplicates and reports invalid entries", async () => {
  const { call } = await contactsFixture();
  const existing = await createdContact(call, { external_id: "taken" });
  const fresh = [randomEmail(), randomEmail()];
  const res = await call("POST", "/bulk", {
    contacts: [
      { email: fresh[0], first_name: "One", tags: ["bulk"] },
      { email: existing.email.toUpperCase() },
      { email: randomEmail(), external_id: "taken" },
      { email: "broken" },
      { first_name: "No email" },
      { email: null },
      { email: fresh[1], external_id: "fresh-2" },
      { email: fresh[1] },
    ],
  });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.created.map((c: { email: string }) => c.email).sort(), [...fresh].sort());
  const one = res.body.created.find((c: { email: string }) => c.email === fresh[0]);
  assert.equal(one.first_name, "One");
  assert.deepEqual(one.tags, ["bulk"]);
  assert.equal(one.metadata.created_via, "api_key");
  assert.deepEqual(one.preferences.sms, { transactional: true, promotional: true });
  assert.deepEqual(res.body.skipped, [
    { email: fresh[1], external_id: null, reason: `You already have a contact with email ${fresh[1]}` },
    {
      email: existing.email.toUpperCase(),
      external_id: null,
      reason: `You already have a contact with email ${existing.email.toUpperCase()}`,
    },
    {
      email: res.body.skipped[2].email,
      external_id: "taken",
      reason: "You already have a contact with external_id taken",
    },
  ]);
  assert.deepEqual(res.body.errors, [
    { email: "broken", error: "Invalid email format" },
    { email: null, error: "Missing required field: email" },
    { email: null, error: "Missing required field: email" },
  ]);
  assert.equal(res.body.total_processed, 8);
  assert.deepEqual(res.body.summary, { created_count: 2, skipped_count: 3, error_count: 3 });
  const listed = await call("GET", "?tag=bulk");
  assert.equal(listed.body.data.length, 1);
});

dbTest("POST /contacts/bulk takes up to 1,000 contacts in one call and refuses more", async () => {
  const { call } = await contactsFixture();
  const contacts = Array.from({ length: 1000 }, (_, i) => ({ email: `bulk${i}@example.com`, tags: ["k"] }));
  const res = await call("POST", "/bulk", { contacts });
  assert.equal(res.status, 200);
  assert.equal(res.body.summary.created_count, 1000);
  const again = await call("POST", "/bulk", { contacts: contacts.slice(0, 10) });
  assert.deepEqual(again.body.summary, { created_count: 0, skipped_count: 10, error_count: 0 });
  const tooMany = await call("POST", "/bulk", { contacts: [...contacts, { email: "one-more@example.com" }] });
  assert.equal(tooMany.status, 400);
  assert.deepEqual(tooMany.body.message, ["contacts must contain at most 1000 elements"]);
  assert.equal((await call("POST", "/bulk", {})).status, 400);
});

dbTest("PATCH …/device-token registers a device and answers the contact with its devices", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const res = await call("PATCH", `/external/${c.external_id}/device-token`, {
    token: APNS,
    platform: "ios",
    os_version: "17.2",
    app_version: "3.1.0",
    device_model: "iPhone15,2",
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.id, c.id);
  assert.equal(res.body.email, c.email);
  assert.ok(res.body.preferences);
  assert.equal(res.body.device_tokens.length, 1);
  const [device] = res.body.device_tokens;
  assert.equal(device.token, APNS);
  assert.equal(device.platform, "ios");
  assert.equal(device.os_version, "17.2");
  assert.equal(device.app_version, "3.1.0");
  assert.equal(device.device_model, "iPhone15,2");
});

dbTest("PATCH …/device-token keeps one row per token and several devices per contact", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const path = `/external/${c.external_id}/device-token`;
  await call("PATCH", path, { token: FCM, platform: "android", app_version: "1.0" });
  const again = await call("PATCH", path, { token: FCM, platform: "android", app_version: "1.1" });
  assert.equal(again.body.device_tokens.length, 1);
  assert.equal(again.body.device_tokens[0].app_version, "1.1");
  const both = await call("PATCH", path, { fcm_token: FCM, apns_token: APNS });
  const tokens = both.body.device_tokens.map((d: { token: string; platform: string }) => [d.token, d.platform]);
  assert.deepEqual(tokens, [[FCM, "android"], [APNS, "ios"]]);
  const web = await call("PATCH", path, { token: "w".repeat(32), platform: "web" });
  assert.equal(web.body.device_tokens.length, 3);
});

dbTest("PATCH …/device-token takes an iOS app's FCM token, stored as an iOS device delivered by FCM", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const path = `/external/${c.external_id}/device-token`;
  const ios = await call("PATCH", path, { token: FCM, platform: "ios" });
  assert.equal(ios.status, 200, JSON.stringify(ios.body));
  const alias = await call("PATCH", path, { fcm_token: "f".repeat(40), platform: "ios" });
  const apns = await call("PATCH", path, { token: APNS, platform: "ios" });
  assert.equal(alias.status, 200);
  const devices = apns.body.device_tokens.map((d: { token: string; platform: string; provider: string }) => [
    d.token,
    d.platform,
    d.provider,
  ]);
  const expected = [[FCM, "ios", "fcm"], ["f".repeat(40), "ios", "fcm"], [APNS, "ios", "apns"]];
  // Devices registered within one millisecond share a created_at, so their order is not defined.
  assert.deepEqual(devices.sort(), expected.sort());
});

dbTest("PATCH …/device-token moves a token registered to another contact of the team", async () => {
  const { call } = await contactsFixture();
  const a = await createdContact(call);
  const b = await createdContact(call);
  await call("PATCH", `/external/${a.external_id}/device-token`, { token: FCM, platform: "android" });
  const moved = await call("PATCH", `/external/${b.external_id}/device-token`, { token: FCM, platform: "android" });
  assert.equal(moved.body.device_tokens.length, 1);
  const back = await call("PATCH", `/external/${a.external_id}/device-token`, { token: APNS, platform: "ios" });
  assert.deepEqual(back.body.device_tokens.map((d: { token: string }) => d.token), [APNS]);
});

dbTest(
  "PATCH …/device-token takes tokens of 4,096 characters: kept once, updated and moved like any other",
  async () => {
    const { call } = await contactsFixture();
    const a = await createdContact(call);
    const b = await createdContact(call);
    // Random, so that the index cannot compress it under its 2,704-byte rows (migration 008).
    const token = randomToken(4_096);
    const first = await call("PATCH", `/external/${a.external_id}/device-token`, { token, platform: "web" });
    assert.equal(first.status, 200, JSON.stringify(first.body).slice(0, 200));
    const again = await call("PATCH", `/external/${a.external_id}/device-token`, {
      token,
      platform: "web",
      app_version: "2.0",
    });
    assert.deepEqual(
      again.body.device_tokens.map((d: { token: string; app_version: string }) => [d.token, d.app_version]),
      [
        [token, "2.0"],
      ],
    );
    const moved = await call("PATCH", `/external/${b.external_id}/device-token`, { token, platform: "web" });
    assert.deepEqual(moved.body.device_tokens.map((d: { token: string }) => d.token), [token]);
    const left = await call("PATCH", `/external/${a.external_id}/device-token`, { token: FCM, platform: "android" });
    assert.deepEqual(left.body.device_tokens.map((d: { token: string }) => d.token), [FCM]);
  },
);

dbTest("PATCH …/device-token with a malformed token is 400 'Invalid device token format'", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const path = `/external/${c.external_id}/device-token`;
  const bad = [
    { token: "short", platform: "android" },
    { token: "x".repeat(4097), platform: "android" },
    { token: "has spaces in it but is long enough....", platform: "web" },
    { apns_token: "abc" },
    { apns_token: FCM },
    { fcm_token: "bad token!" },
  ];
  for (const body of bad) {
    const res = await call("PATCH", path, body);
    assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
    assert.equal(res.body.message, "Invalid device token format");
    assert.deepEqual(res.body.details, { field: "token", code: "invalid_format" });
  }
  assert.deepEqual((await call("PATCH", path, {})).body.message, ["token should not be empty"]);
  assert.deepEqual((await call("PATCH", path, { token: FCM })).body.message, ["platform should not be empty"]);
  const platform = await call("PATCH", path, { token: FCM, platform: "symbian" });
  assert.deepEqual(platform.body.message, ["platform must be one of: android, ios, web"]);
  assert.equal((await call("PATCH", "/external/nobody/device-token", { token: FCM, platform: "android" })).status, 404);
});

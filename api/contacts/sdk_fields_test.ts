import assert from "node:assert/strict";
import { listDeviceTokens } from "../../shared/contacts/device_tokens.ts";
import { DEFAULT_PREFERENCES } from "../../shared/contacts/preference_defaults.ts";
import { dbTest, randomEmail } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";
import { caller, contactsFixture, createdContact } from "./testing.ts";

const APNS = "0123456789abcdef".repeat(4);
const FCM = "fcm:APA91b-" + "x".repeat(140);

dbTest("POST /contacts keeps a top-level phone as custom_fields.phone in E.164, and SMS reaches it", async () => {
  const f = await sendingFixture();
  const call = caller(f.app, f.keys.live);
  const c = await createdContact(call, { phone: "+1 (415) 555-0142", custom_fields: { plan: "pro", phone: "old" } });
  assert.deepEqual(c.custom_fields, { plan: "pro", phone: "+14155550142" });
  assert.equal(c.phone, undefined);
  await f.fund(5);
  await f.template("sms", "hello", { body: "Hi {{contact_first_name}}" });
  const res = await f.post("/api/v1/sms/send", {
    template_key: "hello",
    recipient_type: "contact",
    contact_external_id: c.external_id,
  });
  const { trigger_id, trigger } = await f.finished(res);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => [m.to_address, m.body]), [["+14155550142", "Hi Ada"]]);
});

dbTest("a top-level phone that is not E.164 is 400 'phone must be in E.164 format', on create and update", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  for (const phone of ["415-555-0142", "+0123", "call me", "+1".padEnd(70, "5")]) {
    const targets = [["POST", ""], ["PATCH", `/${c.id}`], ["PUT", `/${c.id}`], ["PATCH", `/external/${c.external_id}`]];
    for (const [method, path] of targets) {
      const body = method === "POST" ? { email: randomEmail(), phone } : { phone };
      const res = await call(method, path, body);
      assert.equal(res.status, 400, `${method} ${phone}`);
      assert.equal(res.body.message, "phone must be in E.164 format");
      assert.deepEqual(res.body.details, { field: "phone", code: "invalid_format" });
    }
  }
  assert.equal((await call("POST", "", { email: randomEmail(), phone: 14155550142 })).status, 400);
  assert.deepEqual((await call("GET", `/${c.id}`)).body.custom_fields, {});
});

dbTest("PATCH /contacts with a phone sets custom_fields.phone alone; null removes it", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call, { custom_fields: { plan: "pro" } });
  const set = await call("PATCH", `/external/${c.external_id}`, { phone: "0044 20 7946 0958" });
  assert.equal(set.status, 200);
  assert.deepEqual(set.body.custom_fields, { plan: "pro", phone: "+442079460958" });
  const both = await call("PUT", `/${c.id}`, { phone: "+33612345678", custom_fields: { plan: "team", phone: "x" } });
  assert.deepEqual(both.body.custom_fields, { plan: "team", phone: "+33612345678" });
  const cleared = await call("PATCH", `/${c.id}`, { phone: null });
  assert.deepEqual(cleared.body.custom_fields, { plan: "team" });
});

dbTest("POST /contacts applies preferences in the read shape over the defaults", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call, {
    preferences: { email: { promotional: true }, sms: { promotional: false, transactional: false } },
  });
  assert.deepEqual(c.preferences, {
    ...DEFAULT_PREFERENCES,
    email: { transactional: true, promotional: true },
    sms: { transactional: false, promotional: false },
  });
  assert.deepEqual((await call("GET", `/external/${c.external_id}/preferences`)).body.preferences, c.preferences);
  const plain = await createdContact(call);
  assert.deepEqual(plain.preferences, DEFAULT_PREFERENCES);
  const typo = await call("POST", "", { email: randomEmail(), preferences: { mail: { promotional: true } } });
  assert.equal(typo.status, 400);
  assert.deepEqual(typo.body.message, ["preferences has unknown properties: mail"]);
  const notBoolean = await call("POST", "", { email: randomEmail(), preferences: { push: { promotional: "yes" } } });
  assert.deepEqual(notBoolean.body.message, ["preferences.push.promotional must be a boolean"]);
});

dbTest("POST /contacts/bulk applies preferences and phone to each contact", async () => {
  const { call } = await contactsFixture();
  const res = await call("POST", "/bulk", {
    contacts: [{ email: randomEmail(), phone: "+14155550100", preferences: { push: { promotional: true } } }, {
      email: randomEmail(),
    }],
  });
  const [first, second] = res.body.created;
  assert.deepEqual(first.custom_fields, { phone: "+14155550100" });
  assert.equal(first.preferences.push.promotional, true);
  assert.deepEqual(second.preferences, DEFAULT_PREFERENCES);
});

dbTest("POST /contacts with fcm_token and apns_token registers the devices with the contact", async () => {
  const { call, deps, team } = await contactsFixture();
  const c = await createdContact(call, { fcm_token: FCM, apns_token: APNS });
  const devices = await listDeviceTokens(deps.sql, team.id, c.id);
  // One statement registers both: they share a created_at, so their order is not defined.
  assert.deepEqual(devices.map((d) => [d.token, d.platform, d.provider]).sort(), [
    [APNS, "ios", "apns"],
    [FCM, "android", "fcm"],
  ]);
  // A device has one user: registered again with another contact, it moves.
  const other = await createdContact(call, { fcm_token: FCM });
  assert.deepEqual((await listDeviceTokens(deps.sql, team.id, c.id)).map((d) => d.token), [APNS]);
  assert.deepEqual((await listDeviceTokens(deps.sql, team.id, other.id)).map((d) => d.token), [FCM]);
});

dbTest("POST /contacts with a malformed device token is 400 and creates nothing", async () => {
  const { call } = await contactsFixture();
  const email = randomEmail();
  for (const body of [{ fcm_token: "short" }, { apns_token: FCM }]) {
    const res = await call("POST", "", { email, ...body });
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.message, "Invalid device token format");
  }
  const dup = await createdContact(call, { fcm_token: FCM });
  const conflict = await call("POST", "", { email: dup.email, apns_token: APNS });
  assert.equal(conflict.status, 409);
  assert.equal((await call("GET", `?email=${encodeURIComponent(email)}`)).body.data.length, 0);
});

import assert from "node:assert/strict";
import { dbTest } from "../../shared/testing.ts";
import { contactsFixture, createdContact } from "./testing.ts";

const all = (value: boolean) => ({
  email: { transactional: value, promotional: value },
  sms: { transactional: value, promotional: value },
  whatsapp: { transactional: value, promotional: value },
  push: { transactional: value, promotional: value },
});

dbTest("GET …/preferences answers the defaults with counts, by external id and by id", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const expected = {
    preferences: {
      email: { transactional: true, promotional: false },
      sms: { transactional: true, promotional: true },
      whatsapp: { transactional: true, promotional: false },
      push: { transactional: true, promotional: false },
    },
    totalPreferences: 8,
    subscribedCount: 5,
    unsubscribedCount: 3,
    subscriptionRate: 62.5,
  };
  for (const path of [`/external/${c.external_id}/preferences`, `/${c.id}/preferences`]) {
    const res = await call("GET", path);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, expected);
  }
});

dbTest("PATCH …/preferences applies the changes and answers the updated contact", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const res = await call("PATCH", `/external/${c.external_id}/preferences`, {
    preferences: [
      { channel: "email", category: "promotional", subscribed: true },
      { channel: "sms", category: "promotional", subscribed: false },
    ],
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.id, c.id);
  assert.equal(res.body.email, c.email);
  assert.deepEqual(res.body.preferences.email, { transactional: true, promotional: true });
  assert.deepEqual(res.body.preferences.sms, { transactional: true, promotional: false });
  assert.deepEqual(res.body.preferences.push, { transactional: true, promotional: false });
  const byId = await call("PATCH", `/${c.id}/preferences`, {
    preferences: [{ channel: "push", category: "transactional", subscribed: false }],
  });
  assert.deepEqual(byId.body.preferences.push, { transactional: false, promotional: false });
  assert.deepEqual(byId.body.preferences.email, { transactional: true, promotional: true });
  const read = await call("GET", `/${c.id}/preferences`);
  assert.deepEqual(read.body.preferences, byId.body.preferences);
  assert.equal(read.body.subscribedCount, 4);
});

dbTest("PATCH …/preferences with a bad channel, category or shape is 400", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const bad = [
    [{ preferences: [{ channel: "fax", category: "promotional", subscribed: true }] }, [
      "preferences.0.channel must be one of: email, sms, whatsapp, push",
    ]],
    [{ preferences: [{ channel: "sms", category: "spam", subscribed: true }] }, [
      "preferences.0.category must be one of: transactional, promotional",
    ]],
    [{ preferences: [{ channel: "sms", category: "promotional" }] }, ["preferences.0.subscribed should not be empty"]],
    [{}, ["preferences should not be empty"]],
    [{ preferences: [] }, ["preferences must contain at least 1 elements"]],
  ] as const;
  for (const [body, message] of bad) {
    const res = await call("PATCH", `/${c.id}/preferences`, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.deepEqual(res.body.message, message);
  }
});

dbTest("PATCH …/preferences/{channel}/{category} sets one preference", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const res = await call("PATCH", `/${c.id}/preferences/whatsapp/promotional`, { subscribed: true });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.preferences.whatsapp, { transactional: true, promotional: true });
  const external = await call("PATCH", `/external/${c.external_id}/preferences/sms/transactional`, {
    subscribed: false,
  });
  assert.deepEqual(external.body.preferences.sms, { transactional: false, promotional: true });
  assert.equal((await call("PATCH", `/${c.id}/preferences/fax/promotional`, { subscribed: true })).status, 400);
  assert.equal((await call("PATCH", `/${c.id}/preferences/sms/promotional`, { subscribed: "no" })).status, 400);
});

dbTest("DELETE …/preferences unsubscribes everything; subscribe-all subscribes everything", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const off = await call("DELETE", `/${c.id}/preferences`);
  assert.equal(off.status, 200);
  assert.deepEqual(off.body.preferences, all(false));
  const read = await call("GET", `/${c.id}/preferences`);
  assert.equal(read.body.subscribedCount, 0);
  assert.equal(read.body.subscriptionRate, 0);
  const on = await call("POST", `/${c.id}/preferences/subscribe-all`);
  assert.equal(on.status, 200);
  assert.deepEqual(on.body.preferences, all(true));
  assert.equal((await call("GET", `/${c.id}/preferences`)).body.subscriptionRate, 100);
  const externalOff = await call("DELETE", `/external/${c.external_id}/preferences`);
  assert.deepEqual(externalOff.body.preferences, all(false));
});

dbTest("DELETE …/preferences/{channel} unsubscribes both categories of that channel only", async () => {
  const { call } = await contactsFixture();
  const c = await createdContact(call);
  const res = await call("DELETE", `/${c.id}/preferences/sms`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.preferences.sms, { transactional: false, promotional: false });
  assert.deepEqual(res.body.preferences.email, { transactional: true, promotional: false });
  assert.equal((await call("DELETE", `/${c.id}/preferences/fax`)).status, 400);
});

dbTest("every preference endpoint answers 404 'Contact not found' for an unknown contact", async () => {
  const { call } = await contactsFixture();
  const change = { preferences: [{ channel: "sms", category: "promotional", subscribed: false }] };
  const calls: [string, string, unknown?][] = [
    ["GET", "/external/nobody/preferences"],
    ["PATCH", "/external/nobody/preferences", change],
    ["GET", `/${crypto.randomUUID()}/preferences`],
    ["PATCH", "/nobody/preferences", change],
    ["DELETE", "/nobody/preferences"],
    ["DELETE", "/nobody/preferences/sms"],
    ["PATCH", "/nobody/preferences/sms/promotional", { subscribed: true }],
    ["POST", "/nobody/preferences/subscribe-all"],
  ];
  for (const [method, path, body] of calls) {
    const res = await call(method, path, body);
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal(res.body.message, "Contact not found");
  }
});

dbTest("a publishable key may create a contact and read and change its preferences", async () => {
  const { publishable } = await contactsFixture();
  const created = await publishable("POST", "", { email: "pk@example.com", external_id: "pk-user" });
  assert.equal(created.status, 201);
  assert.equal(created.body.metadata.created_via, "api_key");
  const read = await publishable("GET", "/external/pk-user/preferences");
  assert.equal(read.status, 200);
  assert.equal(read.body.totalPreferences, 8);
  const changed = await publishable("PATCH", "/external/pk-user/preferences", {
    preferences: [{ channel: "email", category: "promotional", subscribed: true }],
  });
  assert.equal(changed.status, 200);
  assert.equal(changed.body.preferences.email.promotional, true);
  const byId = await publishable("PATCH", `/${created.body.id}/preferences/sms/promotional`, { subscribed: false });
  assert.equal(byId.status, 200);
  assert.equal((await publishable("GET", `/${created.body.id}/preferences`)).status, 200);
  assert.equal((await publishable("POST", `/${created.body.id}/preferences/subscribe-all`)).status, 200);
});

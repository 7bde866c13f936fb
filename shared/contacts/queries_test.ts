import assert from "node:assert/strict";
import { ConflictError } from "../errors.ts";
import { dbTest, randomEmail, testDeps, testTeam } from "../testing.ts";
import { createContacts } from "./bulk.ts";
import { uuidV7Time } from "../sending/ids.ts";
import { DEFAULT_PREFERENCES } from "./preference_defaults.ts";
import { isApnsToken, isValidDeviceToken, pushServiceOf } from "./device_tokens.ts";
import { setAll, summarisePreferences } from "./preferences.ts";
import { createContact, deleteContact, findContact, isUuid, updateContact } from "./queries.ts";

Deno.test("isUuid() accepts canonical UUIDs in any case and nothing else", () => {
  const id = crypto.randomUUID();
  assert.ok(isUuid(id));
  assert.ok(isUuid(id.toUpperCase()));
  for (const s of ["", "abc", id.replaceAll("-", ""), `{${id}}`, `${id}x`, "x'::uuid--"]) assert.ok(!isUuid(s), s);
});

Deno.test("summarisePreferences() counts the eight preferences and the subscribed percentage", () => {
  const prefs = {
    email: { transactional: true, promotional: false },
    sms: { transactional: true, promotional: true },
    whatsapp: { transactional: false, promotional: false },
    push: { transactional: true, promotional: false },
  };
  assert.deepEqual(summarisePreferences(prefs), {
    totalPreferences: 8,
    subscribedCount: 4,
    unsubscribedCount: 4,
    subscriptionRate: 50,
  });
  assert.equal(setAll(true).length, 8);
  assert.deepEqual(setAll(false, ["sms"]), [
    { channel: "sms", category: "transactional", subscribed: false },
    { channel: "sms", category: "promotional", subscribed: false },
  ]);
});

Deno.test("isValidDeviceToken() takes 32–4,096 of [A-Za-z0-9_:.-] on every platform; isApnsToken() 64 hex", () => {
  assert.ok(isValidDeviceToken("a".repeat(32)));
  assert.ok(isValidDeviceToken("A_b:c.d-" + "9".repeat(4088)));
  assert.ok(!isValidDeviceToken("a".repeat(31)));
  assert.ok(!isValidDeviceToken("a".repeat(4097)));
  assert.ok(!isValidDeviceToken("a".repeat(40) + "/"));
  assert.ok(isApnsToken("0aF".repeat(21) + "b"));
  assert.ok(!isApnsToken("a".repeat(63)));
  assert.ok(!isApnsToken("g".repeat(64)));
});

Deno.test("pushServiceOf() sends an iOS device's APNs token to APNs and every other token to FCM", () => {
  const apns = "0aF".repeat(21) + "b";
  const fcm = "dGVzdA:APA91b" + "x".repeat(140);
  assert.equal(pushServiceOf(apns, "ios"), "apns");
  assert.equal(pushServiceOf(fcm, "ios"), "fcm");
  assert.equal(pushServiceOf(fcm, "android"), "fcm");
  assert.equal(pushServiceOf(apns, "android"), "fcm");
  assert.equal(pushServiceOf(fcm, "web"), "fcm");
  assert.equal(pushServiceOf(apns, undefined), "fcm");
});

dbTest("findContact() never sends a non-UUID to a uuid cast and scopes by team", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const c = await createContact(deps.sql, team.id, { email: randomEmail(), external_id: "not a uuid'" });
  assert.equal((await findContact(deps.sql, team.id, { by: "id", value: "not a uuid'" }))?.id, c.id);
  assert.equal((await findContact(deps.sql, team.id, { by: "id", value: c.id }))?.id, c.id);
  assert.equal(await findContact(deps.sql, crypto.randomUUID(), { by: "id", value: c.id }), undefined);
  assert.equal(await findContact(deps.sql, team.id, { by: "external_id", value: c.id }), undefined);
});

dbTest("updateContact() and deleteContact() touch only the team's contact", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const { team: other } = await testTeam(deps);
  const c = await createContact(deps.sql, team.id, { email: randomEmail() });
  assert.equal(await updateContact(deps.sql, other.id, { by: "id", value: c.id }, { first_name: "X" }), undefined);
  assert.equal(await deleteContact(deps.sql, other.id, { by: "id", value: c.id }), undefined);
  const dup = createContact(deps.sql, team.id, { email: c.email.toUpperCase() });
  await assert.rejects(dup, ConflictError);
  assert.equal(await deleteContact(deps.sql, team.id, { by: "id", value: c.id }), c.id);
});

dbTest("contact ids are UUID v7, in the order the contacts were made (a fan-out pages them so)", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const before = Date.now();
  const first = await createContact(deps.sql, team.id, { email: randomEmail() });
  await new Promise((r) => setTimeout(r, 2));
  const { created } = await createContacts(deps.sql, team.id, [{ email: randomEmail() }, { email: randomEmail() }]);
  for (const c of [first, ...created]) {
    const time = uuidV7Time(c.id);
    assert.ok(time !== undefined, `${c.id} is not a UUID v7`);
    assert.ok(time >= before - 1 && time <= Date.now() + 1, `${c.id}: ${time} is not its creation time`);
  }
  assert.ok(created.every((c) => c.id > first.id), "made later, sorted after");
});

dbTest("createContacts() inserts the batch once and skips existing and repeated entries", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const existing = await createContact(deps.sql, team.id, { email: randomEmail(), external_id: "e1" });
  const fresh = randomEmail();
  const { created, skipped } = await createContacts(deps.sql, team.id, [
    { email: fresh },
    { email: fresh.toUpperCase() },
    { email: existing.email },
    { email: randomEmail(), external_id: "e1" },
  ]);
  assert.deepEqual(created.map((c) => c.email), [fresh]);
  assert.deepEqual(skipped.map((s) => s.reason), [
    `You already have a contact with email ${fresh.toUpperCase()}`,
    `You already have a contact with email ${existing.email}`,
    "You already have a contact with external_id e1",
  ]);
  assert.deepEqual(await createContacts(deps.sql, team.id, []), { created: [], skipped: [] });
});

dbTest("DEFAULT_PREFERENCES are the column default that other inserts get", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const [row] = await deps.sql`
    insert into contacts (team_id, external_id, email) values (${team.id}, 'plain', ${randomEmail()})
    returning preferences`;
  assert.deepEqual(row.preferences, DEFAULT_PREFERENCES);
});

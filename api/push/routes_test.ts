import assert from "node:assert/strict";
import { upsertSegment } from "../../shared/segments.ts";
import { dbTest } from "../../shared/testing.ts";
import { randomToken, sendingFixture } from "../../worker/testing.ts";
import { listOutbox } from "../admin/queries.ts";

const ANDROID = "fcm:" + "A1".repeat(30);
const IOS = "ab".repeat(32);

dbTest("POST /push/send to a device token delivers title and body", async () => {
  const f = await sendingFixture();
  const res = await f.post("/api/v1/push/send", {
    recipient_type: "direct_push",
    direct_device_token: ANDROID,
    direct_platform: "android",
    title: "Hello {{name}}",
    body: "Welcome",
    variables: { name: "Ann" },
    actions: [{ title: "Open", action: "open" }],
    custom_data: { order: 42 },
  });
  const { trigger_id, trigger } = await f.finished(res);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => [m.channel, m.to_address, m.subject, m.body]), [
    ["push", ANDROID, "Hello Ann", "Welcome"],
  ]);
});

dbTest("POST /push/send to a device token of 4,096 characters delivers it, and the outbox finds it", async () => {
  const f = await sendingFixture();
  const token = randomToken(4_096);
  const res = await f.post("/api/v1/push/send", {
    recipient_type: "direct_push",
    direct_device_token: token,
    direct_platform: "web",
    title: "Long",
    body: "Token",
  });
  const { trigger_id, trigger } = await f.finished(res);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => m.to_address), [token]);
  const outbox = await listOutbox(f.deps.sql, { to: token }, 10);
  assert.deepEqual(outbox.map((m) => m.trigger_id), [trigger_id]);
});

dbTest("POST /push/send to a contact goes to each of its devices, from a template by key or id", async () => {
  const f = await sendingFixture();
  await f.template("push", "news", { title: "News", body: "For {{contact_email}}" });
  const [{ id: templateId }] = await f.deps.sql`
    select id from templates where team_id = ${f.team.id} and channel = 'push' and key = 'news'`;
  const c = await f.contact({ external_id: "dev", email: "dev@example.com" });
  await f.device(c.id, ANDROID);
  await f.device(c.id, IOS, "ios");
  for (const ref of [{ template_key: "news" }, { template_id: templateId }]) {
    const res = await f.post("/api/v1/push/send", { recipient_type: "contact", contact_external_id: "dev", ...ref });
    const { trigger_id, trigger } = await f.finished(res);
    assert.deepEqual(trigger.summary, { total_contacts: 2, sent: 2, failed: 0, filtered: 0 });
    assert.deepEqual(
      (await f.outbox(trigger_id)).map((m) => [m.to_address, m.body]).sort(),
      [
        [IOS, "For dev@example.com"],
        [ANDROID, "For dev@example.com"],
      ].sort(),
    );
  }
});

dbTest("POST /push/send to a segment filters promotional pushes by preference, and paces them", async () => {
  const f = await sendingFixture();
  const a = await f.contact({ tags: ["beta"] });
  const b = await f.contact({ tags: ["beta"] });
  await f.device(a.id, ANDROID);
  await f.device(b.id, "x".repeat(40));
  await f.deps
    .sql`update contacts set preferences = jsonb_set(preferences, '{push,promotional}', 'true') where id = ${a.id}`;
  await upsertSegment(f.deps.sql, f.team.id, "beta-users", { name: "Beta", filter: { tags_any: ["beta"] } });
  const send = (message_category: string) =>
    f.post("/api/v1/push/send", {
      recipient_type: "segment",
      segment_id: "beta-users",
      title: "Try it",
      body: "New feature",
      message_category,
    });
  // Transactional push is never held back; promotional books its batches at the team's rate.
  assert.equal((await f.finished(await send("transactional"))).trigger.summary.sent, 2);
  assert.equal(await f.deps.sendState.pushPace(f.team.id), null);
  const { trigger } = await f.finished(await send("promotional"));
  assert.deepEqual(trigger.summary, { total_contacts: 2, sent: 1, failed: 0, filtered: 1 });
  assert.equal(typeof (await f.deps.sendState.pushPace(f.team.id))?.value, "number");
});

dbTest("POST /push/send with scheduled_at answers scheduled_for and delay_ms", async () => {
  const f = await sendingFixture();
  const at = new Date(Date.now() + 60_000).toISOString();
  const res = await f.post("/api/v1/push/send", {
    recipient_type: "direct_push",
    direct_device_token: ANDROID,
    title: "T",
    body: "B",
    scheduled_at: at,
  });
  const body = await res.json();
  assert.equal(res.status, 201);
  assert.equal(body.message, "scheduled successfully");
  assert.equal(body.scheduled_for, at);
  assert.ok(body.delay_ms > 50_000 && body.delay_ms <= 60_000);
});

dbTest("POST /push/send answers the errors of the specification", async () => {
  const f = await sendingFixture();
  const lonely = await f.contact({ external_id: "lonely", tags: ["none"] });
  void lonely;
  const send = (body: Record<string, unknown>) => f.send("/api/v1/push/send", body);
  const noTitle = await send({ recipient_type: "direct_push", direct_device_token: ANDROID, body: "B" });
  assert.equal(noTitle.status, 400);
  assert.deepEqual(noTitle.body.message, ["title should not be empty"]);
  const badToken = await send({ recipient_type: "direct_push", direct_device_token: "short", title: "T", body: "B" });
  assert.equal(badToken.status, 400);
  assert.equal(badToken.body.message, "Invalid device token format");
  // An iOS app that uses Firebase has an FCM token: taken (and sent through FCM).
  const iosFirebase = await send({
    recipient_type: "direct_push",
    direct_device_token: ANDROID,
    direct_platform: "ios",
    title: "T",
    body: "B",
  });
  assert.equal(iosFirebase.status, 201, JSON.stringify(iosFirebase.body));
  const noTokens = await send({ recipient_type: "contact", contact_external_id: "lonely", title: "T", body: "B" });
  assert.equal(noTokens.status, 400);
  assert.equal(noTokens.body.message, "No valid push tokens for the selected recipients");
  const noTaggedTokens = await send({ recipient_type: "tag", tag: ["none"], title: "T", body: "B" });
  assert.equal(noTaggedTokens.body.message, "No valid push tokens for the selected recipients");
  // `all` targets active contacts: a team whose only device is an inactive contact's has none.
  const away = await f.contact({ tags: ["away"], is_active: false });
  await f.device(away.id, ANDROID);
  for (const target of [{ recipient_type: "all" }, { recipient_type: "tag", tag: ["away"] }]) {
    const inactiveOnly = await send({ ...target, title: "T", body: "B" });
    assert.equal(inactiveOnly.status, 400, target.recipient_type);
    assert.equal(inactiveOnly.body.message, "No valid push tokens for the selected recipients");
  }
  const ghost = await send({ recipient_type: "contact", contact_external_id: "ghost", title: "T", body: "B" });
  assert.equal(ghost.status, 404);
  assert.equal(ghost.body.message, "Contact with external_id 'ghost' not found");
  const actions = Array.from({ length: 3 }, (_, i) => ({ title: `A${i}`, action: `a${i}` }));
  const tooMany = await send({
    recipient_type: "direct_push",
    direct_device_token: ANDROID,
    direct_platform: "web",
    title: "T",
    body: "B",
    actions,
  });
  assert.deepEqual(tooMany.body.message, ["actions must contain at most 2 elements"]);
  // A token without a platform is an Android (FCM) token: its 3 actions at most, as its format.
  const four = [...actions, { title: "A3", action: "a3" }];
  const noPlatform = await send({
    recipient_type: "direct_push",
    direct_device_token: ANDROID,
    title: "T",
    body: "B",
    actions: four,
  });
  assert.deepEqual(noPlatform.body.message, ["actions must contain at most 3 elements"]);
  const noTemplate = await send({ recipient_type: "direct_push", direct_device_token: ANDROID, template_key: "x" });
  assert.equal(noTemplate.body.message, "Template 'x' not found for team");
});

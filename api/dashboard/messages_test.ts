import assert from "node:assert/strict";
import { createContact } from "../../shared/contacts/queries.ts";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";
import { allPages, insertMessages, nextLink, signedInFixture, testUser, Visitor } from "./testing.ts";

/** The message ids a page links to, in page order. */
function messageLinks(html: string): string[] {
  return [...html.matchAll(/href="\/dashboard\/messages\/([\w]+)"/g)].map((m) => m[1]);
}

dbTest("a team without messages is told how to send its first one", async () => {
  const { v } = await signedInFixture();
  const page = await v.get("/dashboard/messages");
  assert.equal(page.status, 200);
  assert.match(page.html, /No messages yet/);
  assert.match(page.html, /POST \/api\/v1\/messages/);
  assert.match(page.html, /aria-current="page">Messages</);
});

dbTest("the activity log pages by keyset: newest first, every message once, to the last page", async () => {
  const { deps, team, v } = await signedInFixture();
  const ids = await insertMessages(deps, team.id, Array.from({ length: 120 }, () => ({})));
  const { ids: seen, pages } = await allPages(v, "/dashboard/messages", messageLinks);
  assert.equal(pages, 3);
  assert.deepEqual(seen, ids.toReversed());
  // Two messages at the same instant are ordered by id, and neither is lost at a page boundary.
  const at = new Date(Date.now() - 10 * 86_400_000);
  const twins = await insertMessages(deps, team.id, Array.from({ length: 51 }, () => ({ created_at: at })));
  const sameTime = await v.get(
    `/dashboard/messages?to=${at.toISOString().slice(0, 10)}&from=${at.toISOString().slice(0, 10)}`,
  );
  const rest = await v.get(nextLink(sameTime.html)!);
  assert.deepEqual([...messageLinks(sameTime.html), ...messageLinks(rest.html)], twins.toSorted().toReversed());
});

dbTest("the activity log filters by channel, status, recipient, trigger and date range", async () => {
  const { deps, team, v } = await signedInFixture();
  const contact = await createContact(deps.sql, team.id, { email: "ann@example.com", external_id: "crm-ann" });
  const trigger = crypto.randomUUID();
  const day = 86_400_000;
  const base = Date.UTC(2026, 0, 10, 12);
  const [email, sms, failed, toAnn, ofTrigger] = await insertMessages(deps, team.id, [
    { channel: "email", created_at: new Date(base) },
    { channel: "sms", to_address: "+14155550101", created_at: new Date(base + day) },
    { channel: "email", status: "failed", created_at: new Date(base + 2 * day) },
    { contact_id: contact.id, to_address: "ann@example.com", created_at: new Date(base + 3 * day) },
    { trigger_id: trigger, channel: "push", created_at: new Date(base + 4 * day) },
  ]);
  await deps.sql`update messages set delivery_status = 'delivered' where id = ${email}`;
  const found = async (query: string) => messageLinks((await v.get(`/dashboard/messages?${query}`)).html).sort();
  assert.deepEqual(await found("channel=sms"), [sms]);
  assert.deepEqual(await found("channel=push"), [ofTrigger]);
  assert.deepEqual(await found("status=failed"), [failed]);
  assert.deepEqual(await found("status=delivered"), [email]);
  assert.deepEqual(await found(`recipient=${encodeURIComponent("+14155550101")}`), [sms]);
  assert.deepEqual(await found("recipient=ANN%40example.com"), [toAnn]);
  assert.deepEqual(await found("recipient=crm-ann"), [toAnn]);
  assert.deepEqual(await found(`trigger=${trigger}`), [ofTrigger]);
  assert.deepEqual(await found("trigger=not-a-uuid"), []);
  assert.deepEqual(await found("from=2026-01-11&to=2026-01-12"), [sms, failed].sort());
  assert.deepEqual(await found("from=2026-01-13"), [toAnn, ofTrigger].sort());
  assert.deepEqual(await found("channel=email&status=failed&to=2026-01-12"), [failed]);
  const none = await v.get("/dashboard/messages?channel=whatsapp");
  assert.match(none.html, /No message matches these filters/);
});

dbTest(
  "a message sent through the API shows in the log, filtered by its template, with its rendered content",
  async () => {
    const f = await sendingFixture();
    await f.template("email", "welcome", { subject: "Welcome {{name}}", html: "<p>Hello {{name}}</p>" });
    const sent = await f.finished(
      await f.post("/api/v1/messages/send", {
        recipient_type: "direct_email",
        direct_email: "zoe@example.com",
        template_key: "welcome",
        variables: { name: "Zoe" },
      }, f.keys.test),
    );
    const v = new Visitor(f.app);
    await v.signIn((await testUser(f.deps, f.team.id)).email);
    const log = await v.get("/dashboard/messages?template=welcome");
    const [id] = messageLinks(log.html);
    assert.ok(id, log.html);
    assert.match(log.html, /zoe@example.com/);
    assert.deepEqual(messageLinks((await v.get("/dashboard/messages?template=other")).html), []);
    assert.deepEqual(messageLinks((await v.get(`/dashboard/messages?trigger=${sent.trigger_id}`)).html), [id]);
    const page = await v.get(`/dashboard/messages/${id}`);
    assert.equal(page.status, 200);
    assert.match(page.html, /id="message-subject">Welcome Zoe</);
    assert.match(page.html, /id="message-body">&lt;p&gt;Hello Zoe&lt;\/p&gt;</);
    assert.match(page.html, /test key: never charged/);
    assert.match(page.html, /message\.sent/);
    assert.ok(page.html.includes(sent.trigger_id));
  },
);

dbTest("a message's page shows its provider id, cost, delivery and read reports, and error", async () => {
  const { deps, team, v } = await signedInFixture();
  const [read, failed] = await insertMessages(deps, team.id, [
    { channel: "whatsapp", to_address: "+14155550102", cost_micros: 5000 },
    { channel: "sms", status: "failed" },
  ]);
  await deps.sql`
    update messages set provider = 'twilio', provider_message_id = 'SM0123456789', sent_at = created_at,
      delivery_status = 'read', delivered_at = created_at + interval '1 minute', read_at = created_at + interval '2 minutes'
    where id = ${read}`;
  await deps.sql`update messages set error = 'The number is not reachable' where id = ${failed}`;
  const page = await v.get(`/dashboard/messages/${read}`);
  assert.match(page.html, /<dd>twilio<\/dd>/);
  assert.match(page.html, /<code>SM0123456789<\/code>/);
  assert.match(page.html, /\$0\.0050/);
  for (const event of ["message.sent", "message.delivered", "message.read"]) {
    assert.ok(page.html.includes(event), event);
  }
  assert.ok(page.html.indexOf("message.delivered") < page.html.indexOf("message.read"));
  const bad = await v.get(`/dashboard/messages/${failed}`);
  assert.match(bad.html, /The number is not reachable/);
  assert.match(bad.html, /message\.failed/);
  assert.ok(!bad.html.includes("message.sent"));
  assert.equal((await v.get("/dashboard/messages/msg_nothing_here")).status, 404);
});

dbTest("a message's page lists its attempts through the team's channel accounts, and which one sent it", async () => {
  const { deps, team, v } = await signedInFixture();
  const [failedOver, plain] = await insertMessages(deps, team.id, [{ channel: "sms" }, { channel: "sms" }]);
  const attempts = [
    { account: "acc-twilio", provider: "twilio", outcome: "temporary", error: "Cannot send sms: Service unavailable" },
    { account: "acc-vonage", provider: "vonage", outcome: "sent", provider_message_id: "vonage-0123" },
  ];
  await deps.sql`update messages set attempts = ${
    deps.sql.json(attempts)
  }, provider = 'vonage' where id = ${failedOver}`;
  const page = await v.get(`/dashboard/messages/${failedOver}`);
  const list = page.html.slice(page.html.indexOf('id="message-attempts"'));
  assert.ok(list.indexOf("acc-twilio") < list.indexOf("acc-vonage"), "in order");
  assert.match(list, /Service unavailable/);
  assert.match(list, /<strong>sent it<\/strong>, id <code>vonage-0123<\/code>/);
  // A message that went the default way has no attempts section.
  assert.ok(!(await v.get(`/dashboard/messages/${plain}`)).html.includes("Attempts"));
});

dbTest("one team never sees another team's messages: not in the log, not by filter, its pages 404", async () => {
  const { deps, team, v, visitor } = await signedInFixture();
  const other = await testTeam(deps);
  const trigger = crypto.randomUUID();
  const [theirs] = await insertMessages(deps, other.team.id, [{
    to_address: "their@example.com",
    trigger_id: trigger,
  }]);
  const [mine] = await insertMessages(deps, team.id, [{}]);
  const log = await v.get("/dashboard/messages");
  assert.deepEqual(messageLinks(log.html), [mine]);
  assert.deepEqual(messageLinks((await v.get(`/dashboard/messages?trigger=${trigger}`)).html), []);
  assert.deepEqual(messageLinks((await v.get("/dashboard/messages?recipient=their%40example.com")).html), []);
  assert.equal((await v.get(`/dashboard/messages/${theirs}`)).status, 404);
  // A cursor of another team's message pages nothing of it (and shows nothing of it).
  assert.deepEqual(messageLinks((await v.get(`/dashboard/messages?after=${theirs}`)).html), []);
  const stranger = visitor();
  await stranger.signIn((await testUser(deps, other.team.id, "member")).email);
  assert.deepEqual(messageLinks((await stranger.get("/dashboard/messages")).html), [theirs]);
  assert.equal((await stranger.get(`/dashboard/messages/${mine}`)).status, 404);
});

dbTest("a member reads the activity log and a message's page", async () => {
  const { deps, team, v } = await signedInFixture("member");
  const [id] = await insertMessages(deps, team.id, [{}]);
  assert.deepEqual(messageLinks((await v.get("/dashboard/messages")).html), [id]);
  assert.equal((await v.get(`/dashboard/messages/${id}`)).status, 200);
});

import assert from "node:assert/strict";
import { setDomainVerified } from "../../shared/identities.ts";
import { upsertSegment } from "../../shared/segments.ts";
import { dbTest } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

dbTest("POST /messages/send delivers a raw email to an address", async () => {
  const f = await sendingFixture();
  const res = await f.post("/api/v1/messages/send", {
    recipient_type: "direct_email",
    direct_email: "ann@example.com",
    subject: "Hello {{name}}",
    content: "<p>Hi {{name}}</p>",
    plain_text_content: "Hi {{name}}",
    variables: { name: "Ann" },
    reply_to: "help@example.com",
    metadata: { campaign: "x" },
  });
  assert.equal(res.status, 201);
  const body = await res.json();
  assert.equal(body.message, "queued successfully");
  assert.deepEqual(body.data, { trigger_id: body.trigger_id, job_id: body.job_id });
  const trigger = await f.waitForTrigger(body.trigger_id);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.equal(trigger.trigger_type, "email");
  assert.deepEqual(await f.outbox(body.trigger_id), [
    { to_address: "ann@example.com", channel: "email", subject: "Hello Ann", body: "<p>Hi Ann</p>" },
  ]);
});

dbTest("POST /messages/send renders a template with the direct recipient's names", async () => {
  const f = await sendingFixture();
  await f.template("email", "welcome", {
    subject: "Welcome {{contact_first_name}}",
    html: "<p>{{greeting}} {{contact_last_name}}</p>",
  });
  const res = await f.post("/api/v1/messages/send", {
    recipient_type: "direct_email",
    direct_email: "bo@example.com",
    template_key: "welcome",
    direct_first_name: "Bo",
    direct_last_name: "Diddley",
    variables: { greeting: "Howdy" },
  });
  const { trigger_id } = await f.finished(res);
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => [m.subject, m.body]), [[
    "Welcome Bo",
    "<p>Howdy Diddley</p>",
  ]]);
});

dbTest("POST /messages/send takes from_email only on a verified domain of the team", async () => {
  const f = await sendingFixture();
  const send = (from: string) =>
    f.post("/api/v1/messages/send", {
      recipient_type: "direct_email",
      direct_email: "ann@example.com",
      subject: "S",
      content: "C",
      from_email: from,
      from_name: "Billing",
    });
  const refused = await send("billing@unverified.test");
  assert.equal(refused.status, 400);
  const body = await refused.json();
  assert.equal(body.message, "Sender address billing@unverified.test is not on a verified domain");
  assert.deepEqual(body.details, { field: "from_email", code: "unverified_domain" });
  await setDomainVerified(f.deps.sql, f.team.id, "verified.test", true);
  assert.equal((await send("billing@verified.test")).status, 201);
});

dbTest(
  "a send whose variables would render a message over 1,000,000 characters fails it with that reason",
  async () => {
    const f = await sendingFixture();
    const res = await f.post("/api/v1/messages/send", {
      recipient_type: "direct_email",
      direct_email: "amp@example.com",
      subject: "S",
      content: "{{x}}".repeat(1_000),
      variables: { x: "A".repeat(100_000) },
    });
    const { trigger_id, trigger } = await f.finished(res);
    assert.equal(trigger.status, "failed");
    assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 0, failed: 1, filtered: 0 });
    assert.deepEqual(await f.outbox(trigger_id), []);
    const [row] = await f.deps.sql`select error from messages where trigger_id = ${trigger_id}`;
    assert.equal(row.error, "Rendered message is over 1,000,000 characters");
  },
);

dbTest("POST /messages/send answers its validation errors", async () => {
  const f = await sendingFixture();
  const send = (body: Record<string, unknown>) => f.send("/api/v1/messages/send", body);
  const empty = await send({ recipient_type: "direct_email", direct_email: "a@example.com" });
  assert.equal(empty.status, 400);
  assert.deepEqual(empty.body.message, ["subject should not be empty", "content should not be empty"]);
  const noAddress = await send({ recipient_type: "direct_email", subject: "S", content: "C" });
  assert.deepEqual(noAddress.body.message, ["direct_email should not be empty"]);
  const badAddress = await send({ recipient_type: "direct_email", direct_email: "nope", subject: "S", content: "C" });
  assert.deepEqual(badAddress.body.message, ["direct_email must be an email"]);
  // An address built to make a pattern backtrack (it froze the process for 38 s), and one over 254 characters.
  for (const direct_email of [`a@${"a.".repeat(150_000)} `, `${"a".repeat(300)}@example.com`]) {
    const res = await send({ recipient_type: "direct_email", direct_email, subject: "S", content: "C" });
    assert.deepEqual(res.body.message, ["direct_email must be an email"]);
  }
  const noTemplate = await send({ recipient_type: "direct_email", direct_email: "a@example.com", template_key: "x" });
  assert.equal(noTemplate.status, 400);
  assert.equal(noTemplate.body.message, "Template 'x' not found for team");
  const unknown = await send({ recipient_type: "contact", contact_external_id: "ghost", subject: "S", content: "C" });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.message, "Contact with external_id 'ghost' not found");
  const segment = await send({ recipient_type: "segment", segment_id: "nope", subject: "S", content: "C" });
  assert.equal(segment.status, 404);
  assert.equal(segment.body.message, "Segment 'nope' not found");
  const badType = await send({ recipient_type: "fax", subject: "S", content: "C" });
  assert.deepEqual(badType.body.message, ["recipient_type must be one of: direct_email, contact, tag, segment, all"]);
});

dbTest(
  "POST /messages/send answers the alternative shape's fields too: its execution, status, recipients, time",
  async () => {
    const f = await sendingFixture();
    await f.contact({ external_id: "t", tags: ["news"] });
    const before = Date.now();
    const direct = await f.post("/api/v1/messages/send", {
      recipient_type: "direct_email",
      direct_email: "ann@example.com",
      subject: "S",
      content: "C",
    });
    assert.equal(direct.status, 201);
    const body = await direct.json();
    assert.equal(body.status, "queued");
    assert.equal(body.recipient_type, "direct_email");
    assert.equal(body.estimated_recipients, 1);
    assert.ok(Date.parse(body.created_at) >= before - 1 && Date.parse(body.created_at) <= Date.now(), body.created_at);
    // The execution id answers on the email execution view, pending or done.
    const execution = await (await f.get(`/api/v1/messages/executions/${body.execution_id}`)).json();
    assert.equal(execution.id, body.execution_id);
    assert.equal(execution.trigger_id, body.trigger_id);
    await f.waitForTrigger(body.trigger_id);
    const done = await (await f.get(`/api/v1/messages/executions/${body.execution_id}`)).json();
    assert.deepEqual([done.status, done.sent_count], ["completed", 1]);

    const tag = await (await f.post("/api/v1/messages/send", {
      recipient_type: "tag",
      tags: "news",
      subject: "S",
      content: "C",
    })).json();
    assert.deepEqual([tag.recipient_type, tag.estimated_recipients], ["tag", null], "a fan-out is counted as it runs");
    await f.waitForTrigger(tag.trigger_id);
  },
);

dbTest("POST /messages/send to a tag filters inactive, unsubscribed and opted-out contacts", async () => {
  const f = await sendingFixture();
  await f.contact({ external_id: "a", tags: ["news"], first_name: "A" });
  await f.contact({ external_id: "b", tags: ["news"], is_active: false });
  const c = await f.contact({ external_id: "c", tags: ["news"] });
  await f.deps.sql`update contacts set is_unsubscribed = true where id = ${c.id}`;
  await f.contact({ external_id: "d", tags: ["other"] });
  const res = await f.post("/api/v1/messages/send", {
    recipient_type: "tag",
    tags: "news",
    subject: "News for {{contact_first_name}}",
    content: "<p>News</p>",
  });
  const { trigger_id } = await res.json();
  const trigger = await f.waitForTrigger(trigger_id);
  assert.deepEqual(trigger.summary, { total_contacts: 3, sent: 1, failed: 0, filtered: 2 });
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => m.subject), ["News for A"]);

  // Promotional email is off by default for every contact.
  const promo = await f.post("/api/v1/messages/send", {
    recipient_type: "tag",
    tag: ["news"],
    subject: "Sale",
    content: "<p>Sale</p>",
    message_category: "promotional",
  });
  const promoTrigger = await f.waitForTrigger((await promo.json()).trigger_id);
  assert.deepEqual(promoTrigger.summary, { total_contacts: 3, sent: 0, failed: 0, filtered: 3 });
  assert.equal(promoTrigger.status, "completed");
});

dbTest("POST /messages/send reaches a segment's contacts and all contacts", async () => {
  const f = await sendingFixture();
  await f.contact({ tags: ["a", "b"] });
  await f.contact({ tags: ["a"] });
  await f.contact({ tags: ["c"] });
  await upsertSegment(f.deps.sql, f.team.id, "seg-1", { name: "A and B", filter: { tags_all: ["a", "b"] } });
  const seg = await f.post("/api/v1/messages/send", {
    recipient_type: "segment",
    segment_id: "seg-1",
    subject: "S",
    content: "C",
  });
  assert.deepEqual((await f.finished(seg)).trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  const all = await f.post("/api/v1/messages/send", { recipient_type: "all", subject: "S", content: "C" });
  assert.deepEqual((await f.finished(all)).trigger.summary, { total_contacts: 3, sent: 3, failed: 0, filtered: 0 });
});

dbTest("POST /messages/send with scheduled_at is scheduled (no delay_ms on email)", async () => {
  const f = await sendingFixture();
  const at = new Date(Date.now() + 600_000).toISOString();
  const res = await f.post("/api/v1/messages/send", {
    recipient_type: "direct_email",
    direct_email: "a@example.com",
    subject: "S",
    content: "C",
    scheduled_at: at,
  });
  const body = await res.json();
  assert.equal(res.status, 201);
  assert.equal(body.message, "scheduled successfully");
  assert.equal(body.scheduled_for, at);
  assert.equal(body.delay_ms, undefined);
  const trigger = await (await f.get(`/api/v1/triggers/${body.trigger_id}`)).json();
  assert.equal(trigger.status, "pending");
  // A scheduled send is listed before it is due.
  const list = await (await f.get("/api/v1/messages")).json();
  assert.equal(list.executions[0].trigger_id, body.trigger_id);
  assert.equal(list.executions[0].status, "pending");
});

dbTest("GET /messages lists email executions and their jobs", async () => {
  const f = await sendingFixture();
  await f.contact({ email: "x1@example.com", tags: ["t"] });
  await f.contact({ email: "x2@example.com", tags: ["t"], is_active: false });
  const { trigger_id } = await (await f.post("/api/v1/messages/send", {
    recipient_type: "tag",
    tag: ["t"],
    subject: "S",
    content: "C",
  })).json();
  await f.waitForTrigger(trigger_id);
  const list = await (await f.get("/api/v1/messages?page=1&limit=5")).json();
  assert.equal(list.total, 1);
  assert.equal(list.page, 1);
  assert.equal(list.limit, 5);
  assert.equal(list.totalPages, 1);
  const execution = list.executions[0];
  assert.equal(execution.sent_count, 1);
  assert.equal(execution.filtered_count, 1);
  const jobs = await (await f.get(`/api/v1/messages/executions/${execution.id}/jobs`)).json();
  assert.equal(jobs.total, 2);
  const byAddress = Object.fromEntries(jobs.jobs.map((j: { recipient: string }) => [j.recipient, j]));
  assert.equal(byAddress["x1@example.com"].status, "sent");
  assert.match(byAddress["x1@example.com"].provider_message_id, /^outbox_/);
  assert.equal(byAddress["x2@example.com"].status, "filtered");
  assert.equal(byAddress["x2@example.com"].error, "Contact is inactive");
  const byTrigger = await (await f.get(`/api/v1/messages/executions/${trigger_id}`)).json();
  assert.equal(byTrigger.id, execution.id);
});

import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { createContact } from "../../shared/contacts/queries.ts";
import type { Deps } from "../../shared/deps.ts";
import { EVENT_SWEEP_AGE_MS, sweepEventOutbox } from "../../shared/event_outbox.ts";
import { upsertSegment } from "../../shared/segments.ts";
import { upsertTemplate } from "../../shared/templates.ts";
import { dbTest, jsonRequest, onKv, testDeps, testTeam } from "../../shared/testing.ts";
import type { Job } from "../jobs.ts";
import { runJob, startWorker } from "../queue.ts";
import { type SendingFixture, sendingFixture, stoppingBeforeWebhooks } from "../testing.ts";

/** A funded team with templates `welcome`/`reminder`/`last` on email, SMS and WhatsApp. */
async function fixture(): Promise<SendingFixture> {
  const f = await sendingFixture();
  await f.fund(100);
  for (const key of ["welcome", "reminder", "last"]) {
    await f.template("email", key, { subject: `${key} {{contact_first_name}}`, html: `<p>${key} {{plan}}</p>` });
    await f.template("sms", key, { body: `${key} sms {{plan}}` });
    await f.template("whatsapp", key, { body: `${key} wa {{plan}}`, category: "UTILITY" });
  }
  return f;
}

async function createWorkflow(f: SendingFixture, body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await f.post("/api/v1/workflows", {
    name: `wf ${crypto.randomUUID().slice(0, 6)}`,
    event_type: "user_signup",
    ...body,
  });
  assert.equal(res.status, 201, JSON.stringify(await res.clone().json()));
  return await res.json();
}

/** A `workflow-step` job of a workflow's step for executions, due now (a first try). */
function stepJob(workflowId: string, stepOrder: number, executionIds: string[]): Job {
  return {
    type: "workflow-step",
    id: crypto.randomUUID(),
    workflow_id: workflowId,
    step_order: stepOrder,
    execution_ids: executionIds,
    due_at: Date.now(),
    attempt: 0,
  };
}

/** Starts workflow `workflowId` for one contact through the API; the 201 answer's body. */
async function startFor(f: SendingFixture, workflowId: string, externalId: string) {
  const res = await f.post("/api/v1/workflows/trigger", {
    workflow_id: workflowId,
    recipient_type: "contact",
    contact_external_id: externalId,
  });
  assert.equal(res.status, 201, JSON.stringify(await res.clone().json()));
  return await res.json();
}

function step(order: number, channel: string, template: string, delay = 0, extra: Record<string, unknown> = {}) {
  return {
    step_order: order,
    channel_type: channel,
    configuration: { template_id: template, delay_minutes: delay, ...extra },
  };
}

/** Outbox rows of a trigger with their times, oldest first. */
async function outboxOf(f: SendingFixture, triggerId: string) {
  return await f.deps.sql<
    { channel: string; to_address: string; subject: string | null; body: string | null; created_at: Date }[]
  >`
    select channel, to_address, subject, body, created_at from outbox_all where trigger_id = ${triggerId}
    order by created_at, id`;
}

dbTest("a three-step workflow sends its steps in order, each after its delay and never early", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, {
    steps: [
      step(1, "email", "welcome"),
      step(2, "sms", "reminder", 0.02),
      step(3, "whatsapp", "last", 0.01),
    ],
  });
  const contact = await f.contact({ first_name: "Ann", custom_fields: { phone: "+14155550123" } });
  const started = Date.now();
  const res = await f.post("/api/v1/workflows/trigger", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    variables: { plan: "pro" },
  });
  assert.equal(res.status, 201);
  const body = await res.json();
  assert.equal(body.success, true);
  assert.equal(body.execution_ids.length, 1);
  const trigger = await f.waitForTrigger(body.trigger_id);
  assert.equal(trigger.status, "completed");
  assert.equal(trigger.flow_type, "workflow");
  assert.deepEqual(trigger.summary, { total_contacts: 3, sent: 3, failed: 0, filtered: 0 });
  const sent = await outboxOf(f, body.trigger_id);
  assert.deepEqual(sent.map((m) => [m.channel, m.to_address, m.subject, m.body]), [
    ["email", contact.email, "welcome Ann", "<p>welcome pro</p>"],
    ["sms", "+14155550123", null, "reminder sms pro"],
    ["whatsapp", "+14155550123", null, "last wa pro"],
  ]);
  const [email, sms, wa] = sent.map((m) => m.created_at.getTime());
  assert.ok(email >= started - 5);
  assert.ok(sms - email >= 1200, `sms came ${sms - email} ms after the email`);
  assert.ok(wa - sms >= 600, `whatsapp came ${wa - sms} ms after the sms`);

  const history = await (await f.get(`/api/v1/workflows/${wf.id}/executions`)).json();
  assert.equal(history.total, 1);
  const execution = history.executions[0];
  assert.equal(execution.id, body.execution_ids[0]);
  assert.equal(execution.trigger_id, body.trigger_id);
  assert.equal(execution.contact_id, contact.id);
  assert.equal(execution.status, "COMPLETED");
  assert.equal(execution.current_step, null);
  assert.deepEqual(
    execution.steps.map((
      s: { step_order: number; channel_type: string; status: string },
    ) => [s.step_order, s.channel_type, s.status]),
    [
      [1, "email", "SENT"],
      [2, "sms", "SENT"],
      [3, "whatsapp", "SENT"],
    ],
  );
  assert.ok(execution.steps.every((s: { message_id?: string }) => typeof s.message_id === "string"));
});

/** Starts `body` and waits for its trigger; answers the start's answer and the trigger. */
async function run(
  f: SendingFixture,
  path: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const res = await f.post(path, body, undefined, headers);
  const answer = await res.json();
  assert.equal(res.status, 201, JSON.stringify(answer));
  return { answer, trigger: await f.waitForTrigger(answer.trigger_id) };
}

dbTest("a tag start reaches only the contacts carrying ALL the tags", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome")] });
  const both = await f.contact({ tags: ["a", "b"] });
  const more = await f.contact({ tags: ["c", "b", "a"] });
  await f.contact({ tags: ["a"] });
  await f.contact({ tags: ["b"] });
  await f.contact({ tags: [] });
  for (const tags of [{ tag: ["a", "b"] }, { tags: ["b", "a"] }, { tag: "a,b" }]) {
    const { answer, trigger } = await run(f, "/api/v1/workflows/trigger", {
      workflow_name: (await (await f.get(`/api/v1/workflows/${wf.id}`)).json()).name,
      recipient_type: "tag",
      ...tags,
    });
    assert.deepEqual(answer.execution_ids, []);
    assert.deepEqual(trigger.summary, { total_contacts: 2, sent: 2, failed: 0, filtered: 0 }, JSON.stringify(tags));
    const to = (await outboxOf(f, answer.trigger_id)).map((m) => m.to_address).sort();
    assert.deepEqual(to, [both.email, more.email].sort());
  }
});

dbTest("a step's messages are found under the execution id their records and webhooks carry", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome"), step(2, "sms", "reminder")] });
  const contacts = [];
  for (const n of [1, 2]) {
    contacts.push(await f.contact({ tags: ["step-ids"], custom_fields: { phone: `+1415555010${n}` } }));
  }
  const name = (await (await f.get(`/api/v1/workflows/${wf.id}`)).json()).name;
  const { answer } = await run(f, "/api/v1/workflows/trigger", {
    workflow_name: name,
    recipient_type: "tag",
    tag: "step-ids",
  });
  const rows = await f.deps.sql<{ execution_id: string; channel: string }[]>`
    select distinct execution_id, channel from messages where trigger_id = ${answer.trigger_id} order by channel`;
  assert.deepEqual(rows.map((r) => r.channel), ["email", "sms"]);
  for (const { execution_id: id, channel } of rows) {
    const path = channel === "email" ? "/api/v1/messages" : "/api/v1/sms";
    const res = await f.get(`${path}/executions/${id}`);
    assert.equal(res.status, 200, channel);
    const execution = await res.json();
    assert.deepEqual(
      [execution.id, execution.trigger_id, execution.channel, execution.status, execution.total_contacts],
      [id, answer.trigger_id, channel, "completed", 2],
    );
    assert.equal(execution.sent_count, 2);
    const jobs = await (await f.get(`${path}/executions/${id}/jobs`)).json();
    assert.deepEqual(
      jobs.jobs.map((j: { contact_id: string }) => j.contact_id).sort(),
      contacts.map((c) => c.id).sort(),
    );
  }
  // Another channel's view does not show it.
  assert.equal((await f.get(`/api/v1/whatsapp/executions/${rows[0].execution_id}`)).status, 404);
});

dbTest("channel_variables override variables on their channel only", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, {
    steps: [step(1, "email", "welcome"), step(2, "sms", "reminder"), step(3, "whatsapp", "last")],
  });
  const contact = await f.contact({ custom_fields: { phone: "+14155550124" } });
  const { answer } = await run(f, "/api/v1/workflows/trigger", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    variables: { plan: "basic" },
    channel_variables: { sms: { plan: "texting" } },
  });
  const bodies = (await outboxOf(f, answer.trigger_id)).map((m) => [m.channel, m.body]);
  assert.deepEqual(bodies, [["email", "<p>welcome basic</p>"], ["sms", "reminder sms texting"], [
    "whatsapp",
    "last wa basic",
  ]]);
});

dbTest("step variables are defaults that the start's variables and the advanced send's overrides replace", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, {
    steps: [
      step(1, "email", "welcome", 0, { variables: { plan: "step-default" } }),
      step(2, "sms", "reminder", 0, { variables: { plan: "step-default" } }),
      step(3, "whatsapp", "last", 5),
    ],
  });
  const contact = await f.contact({ custom_fields: { phone: "+14155550125" } });
  const sent = await run(f, "/api/v1/workflows/send", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    variables: { plan: "from-send" },
    steps_override: [
      { step_order: 2, variables: { plan: "override" } },
      { step_order: 3, delay_minutes: 0 },
    ],
    metadata: { campaign: "x" },
  });
  const bodies = (await outboxOf(f, sent.answer.trigger_id)).map((m) => m.body);
  assert.deepEqual(bodies, ["<p>welcome from-send</p>", "reminder sms override", "last wa from-send"]);
  const skipped = await run(f, "/api/v1/workflows/send", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    steps_override: { "2": { is_active: false }, "3": { delay_minutes: 0 } },
  });
  assert.deepEqual((await outboxOf(f, skipped.answer.trigger_id)).map((m) => m.channel), ["email", "whatsapp"]);
  assert.deepEqual(skipped.trigger.summary, { total_contacts: 2, sent: 2, failed: 0, filtered: 0 });
});

function sendEvent(f: SendingFixture, body: Record<string, unknown>, key?: string) {
  return f.post("/api/v1/events/send", body, key, { "X-Team-ID": f.team.id });
}

async function eventRun(f: SendingFixture, body: Record<string, unknown>, key?: string) {
  const res = await sendEvent(f, body, key);
  const answer = await res.json();
  assert.equal(res.status, 201, JSON.stringify(answer));
  return { answer, trigger: await f.waitForTrigger(answer.trigger_id) };
}

dbTest("an event starts every active workflow listening to it, for the contact of user_info", async () => {
  const f = await fixture();
  await f.template("email", "order", {
    subject: "Order {{order_id}}",
    html: "{{event_name}}: {{event_data.total}} {{plan}}",
  });
  const a = await createWorkflow(f, { event_type: "order_paid", steps: [step(1, "email", "order")] });
  const b = await createWorkflow(f, { event_type: "order_paid", steps: [step(1, "sms", "reminder")] });
  await createWorkflow(f, { event_type: "order_paid", is_active: false, steps: [step(1, "whatsapp", "last")] });
  await createWorkflow(f, { event_type: "other_event", steps: [step(1, "whatsapp", "last")] });
  const contact = await f.contact({ custom_fields: { phone: "+14155550126" } });
  const res = await sendEvent(f, {
    event_name: "order_paid",
    user_info: { contact_external_id: contact.external_id },
    event_data: { order_id: "A-1", total: 42 },
    variables: { plan: "gold" },
    source: { type: "api" },
  }, f.keys.publishable);
  assert.equal(res.status, 201);
  const answer = await res.json();
  assert.equal(answer.success, true);
  assert.equal(answer.message, "Event queued successfully");
  assert.deepEqual(answer.data, { trigger_id: answer.trigger_id, job_id: answer.job_id });
  const trigger = await f.waitForTrigger(answer.trigger_id);
  assert.equal(trigger.trigger_type, "event");
  assert.deepEqual(trigger.summary, { total_contacts: 2, sent: 2, failed: 0, filtered: 0 });
  const sent = (await outboxOf(f, answer.trigger_id)).map((m) => [m.channel, m.subject, m.body]).sort();
  assert.deepEqual(sent, [["email", "Order A-1", "order_paid: 42 gold"], ["sms", null, "reminder sms gold"]]);
  const detail = await (await f.get(`/api/v1/triggers/${answer.trigger_id}/workflow`)).json();
  assert.equal(detail.flow_type, "workflow");
  assert.equal(detail.status, "completed");
  assert.deepEqual(detail.workflows.map((w: { id: string }) => w.id).sort(), [a.id, b.id].sort());
  assert.equal(detail.executions.length, 2);
  assert.ok(
    detail.executions.every((e: { contact_id: string; status: string }) =>
      e.contact_id === contact.id && e.status === "COMPLETED"
    ),
  );
});

dbTest("an event finds its contact by email when no external id is given", async () => {
  const f = await fixture();
  await createWorkflow(f, { event_type: "signup", steps: [step(1, "email", "welcome")] });
  const contact = await f.contact({ first_name: "Bo" });
  const { answer, trigger } = await eventRun(f, {
    event_name: "signup",
    user_info: { email: contact.email.toUpperCase() },
  });
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.deepEqual((await outboxOf(f, answer.trigger_id)).map((m) => m.to_address), [contact.email]);
  const nobody = await eventRun(f, { event_name: "signup", user_info: { email: "nobody@example.com" } });
  assert.equal(nobody.trigger.status, "completed");
  assert.deepEqual(nobody.trigger.summary, { total_contacts: 0, sent: 0, failed: 0, filtered: 0 });
});

dbTest("a workflow's tag and segment conditions filter whom an event reaches", async () => {
  const f = await fixture();
  await createWorkflow(f, { event_type: "promo", conditions: { tags: ["vip"] }, steps: [step(1, "email", "welcome")] });
  const vip = await f.contact({ tags: ["vip"] });
  const plain = await f.contact({ tags: ["basic"] });
  const reached = await eventRun(f, { event_name: "promo", user_info: { email: vip.email } });
  assert.equal(reached.trigger.summary.sent, 1);
  assert.equal(reached.trigger.note, undefined);
  const filtered = await eventRun(f, { event_name: "promo", user_info: { email: plain.email } });
  assert.deepEqual(filtered.trigger.summary, { total_contacts: 0, sent: 0, failed: 0, filtered: 0 });
  // A trigger that reached no one says why.
  assert.equal(filtered.trigger.note, "The contact does not meet the workflow's conditions");
  const stranger = await eventRun(f, { event_name: "promo", user_info: { email: "nobody@example.com" } });
  assert.equal(stranger.trigger.note, "No contact matches the event's user_info (contact_external_id or email)");

  await upsertSegment(f.deps.sql, f.team.id, "beta", { name: "Beta", filter: { tags_any: ["beta", "alpha"] } });
  await createWorkflow(f, {
    event_type: "beta_news",
    conditions: { segment_id: "beta" },
    steps: [step(1, "email", "welcome")],
  });
  await createWorkflow(f, {
    event_type: "ghost",
    conditions: { segment_id: "missing" },
    steps: [step(1, "email", "welcome")],
  });
  const beta = await f.contact({ tags: ["alpha"] });
  assert.equal(
    (await eventRun(f, { event_name: "beta_news", user_info: { email: beta.email } })).trigger.summary.sent,
    1,
  );
  assert.equal(
    (await eventRun(f, { event_name: "beta_news", user_info: { email: plain.email } })).trigger.summary.sent,
    0,
  );
  const ghost = await eventRun(f, { event_name: "ghost", user_info: { email: beta.email } });
  assert.equal(ghost.trigger.summary.sent, 0);
  assert.equal(ghost.trigger.note, "The workflow's segment no longer exists");
});

dbTest("a tag or all start that reaches no one says why", async () => {
  const f = await fixture();
  const plain = await createWorkflow(f, { steps: [step(1, "email", "welcome")] });
  const start = async (workflowId: string, body: Record<string, unknown>) =>
    (await run(f, "/api/v1/workflows/trigger", { workflow_id: workflowId, ...body })).trigger;
  const empty = await start(plain.id, { recipient_type: "all" });
  assert.deepEqual(empty.summary, { total_contacts: 0, sent: 0, failed: 0, filtered: 0 });
  assert.equal(empty.note, "The team has no contacts");

  await f.contact({ tags: ["basic"] });
  assert.equal(
    (await start(plain.id, { recipient_type: "tag", tag: "vip" })).note,
    "No contact has every tag of the start",
  );
  const vipOnly = await createWorkflow(f, { conditions: { tags: ["vip"] }, steps: [step(1, "email", "welcome")] });
  assert.equal((await start(vipOnly.id, { recipient_type: "all" })).note, "No contact meets the workflow's conditions");
  assert.equal(
    (await start(vipOnly.id, { recipient_type: "tag", tag: "basic" })).note,
    "No contact has every tag of the start and meets the workflow's conditions",
  );
  const ghost = await createWorkflow(f, {
    conditions: { segment_id: "missing" },
    steps: [step(1, "email", "welcome")],
  });
  assert.equal((await start(ghost.id, { recipient_type: "all" })).note, "The workflow's segment no longer exists");

  const once = await createWorkflow(f, { conditions: { cooldown_minutes: 60 }, steps: [step(1, "email", "welcome")] });
  const first = await start(once.id, { recipient_type: "all" });
  assert.equal(first.summary.sent, 1);
  assert.equal(first.note, undefined);
  const again = await start(once.id, { recipient_type: "all" });
  assert.equal(again.summary.total_contacts, 0);
  assert.equal(again.note, "Every contact it found is within the workflow's cooldown");
});

dbTest("a start whose every step is switched off sends nothing and says why, for one contact or all", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome"), step(2, "sms", "reminder")] });
  const contact = await f.contact({ custom_fields: { phone: "+14155550125" } });
  const off = { "1": { is_active: false }, "2": { is_active: false } };
  for (
    const target of [{ recipient_type: "contact", contact_external_id: contact.external_id }, { recipient_type: "all" }]
  ) {
    const { answer, trigger } = await run(f, "/api/v1/workflows/send", {
      workflow_id: wf.id,
      ...target,
      steps_override: off,
    });
    assert.equal(trigger.status, "completed", target.recipient_type);
    assert.deepEqual(trigger.summary, { total_contacts: 0, sent: 0, failed: 0, filtered: 0 }, target.recipient_type);
    assert.equal(trigger.note, "The workflow has no active step", target.recipient_type);
    assert.equal((await outboxOf(f, answer.trigger_id)).length, 0);
  }
});

dbTest("cooldown_minutes lets a contact start a workflow once per cooldown", async () => {
  const f = await fixture();
  await createWorkflow(f, {
    event_type: "visit",
    conditions: { cooldown_minutes: 60 },
    steps: [step(1, "email", "welcome")],
  });
  const ann = await f.contact({});
  const bob = await f.contact({});
  const results = await Promise.all(
    [1, 2, 3].map(() => eventRun(f, { event_name: "visit", user_info: { email: ann.email } })),
  );
  assert.deepEqual(results.map((r) => r.trigger.summary.total_contacts).sort(), [0, 0, 1]);
  assert.deepEqual(results.map((r) => r.trigger.note ?? "reached").sort(), [
    "The contact is within the workflow's cooldown",
    "The contact is within the workflow's cooldown",
    "reached",
  ]);
  assert.equal((await eventRun(f, { event_name: "visit", user_info: { email: bob.email } })).trigger.summary.sent, 1);
  // Once the cooldown is over, the contact starts it again.
  await f.deps.sql`update workflow_cooldowns set last_started_at = now() - interval '61 minutes'
    where contact_id = ${ann.id}`;
  assert.equal((await eventRun(f, { event_name: "visit", user_info: { email: ann.email } })).trigger.summary.sent, 1);
});

dbTest("a scheduled event answers 'Event scheduled for <timestamp>' and runs no earlier", async () => {
  const f = await fixture();
  await createWorkflow(f, { event_type: "later", steps: [step(1, "email", "welcome")] });
  const contact = await f.contact({});
  const at = new Date(Date.now() + 1500).toISOString();
  const res = await sendEvent(f, { event_name: "later", user_info: { email: contact.email }, trigger_at: at });
  assert.equal(res.status, 201);
  const answer = await res.json();
  assert.equal(answer.message, `Event scheduled for ${at}`);
  assert.equal(answer.scheduled_for, at);
  const pending = await (await f.get(`/api/v1/triggers/${answer.trigger_id}`)).json();
  assert.equal(pending.status, "pending");
  assert.equal(pending.scheduled_for, at);
  assert.equal(pending.details_endpoint, `/api/v1/triggers/${answer.trigger_id}/workflow`);
  const trigger = await f.waitForTrigger(answer.trigger_id);
  assert.equal(trigger.summary.sent, 1);
  const [message] = await outboxOf(f, answer.trigger_id);
  assert.ok(message.created_at.getTime() >= Date.parse(at), "sent before trigger_at");
});

dbTest("a scheduled start whose contact is deleted before it runs completes, having sent nothing", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome")] });
  const contact = await f.contact({});
  const at = new Date(Date.now() + 1500).toISOString();
  const res = await f.post("/api/v1/workflows/trigger", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    trigger_at: at,
  });
  assert.equal(res.status, 201);
  const { trigger_id } = await res.json();
  await f.deps.sql`delete from contacts where id = ${contact.id}`;
  const trigger = await f.waitForTrigger(trigger_id);
  assert.equal(trigger.status, "completed");
  assert.deepEqual(trigger.summary, { total_contacts: 0, sent: 0, failed: 0, filtered: 0 });
  assert.deepEqual((await outboxOf(f, trigger_id)).map((m) => [m.channel, m.to_address]), []);
  assert.equal(trigger.note, "The contact was deleted before the start ran");
  const detail = await (await f.get(`/api/v1/triggers/${trigger_id}/workflow`)).json();
  assert.equal(detail.note, "The contact was deleted before the start ran");
});

dbTest("a scheduled start of a workflow deactivated before it runs completes, saying so", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome")] });
  const contact = await f.contact({});
  const res = await f.post("/api/v1/workflows/trigger", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    trigger_at: new Date(Date.now() + 1500).toISOString(),
  });
  assert.equal(res.status, 201);
  const { trigger_id } = await res.json();
  const patched = await f.app.request(
    `/api/v1/workflows/${wf.id}`,
    jsonRequest("PATCH", { is_active: false }, { "X-API-Key": f.keys.live }),
  );
  assert.equal(patched.status, 200);
  const trigger = await f.waitForTrigger(trigger_id);
  assert.equal(trigger.status, "completed");
  assert.deepEqual(trigger.summary, { total_contacts: 0, sent: 0, failed: 0, filtered: 0 });
  assert.equal(trigger.note, "The workflow was deactivated or deleted before the start ran");
});

dbTest("a running workflow trigger's summary counts the steps' messages sent so far", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome"), step(2, "email", "reminder", 60)] });
  const contact = await f.contact({});
  const res = await f.post("/api/v1/workflows/trigger", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
  });
  const { trigger_id } = await res.json();
  await until(async () => (await outboxOf(f, trigger_id)).length === 1, "the first step");
  let trigger: { status: string; summary: unknown } | undefined;
  await until(async () => {
    trigger = await (await f.get(`/api/v1/triggers/${trigger_id}`)).json();
    return JSON.stringify(trigger!.summary) !== JSON.stringify({ total_contacts: 0, sent: 0, failed: 0, filtered: 0 });
  }, "the first step's count");
  assert.equal(trigger!.status, "processing");
  assert.deepEqual(trigger!.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
});

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function executionState(f: Pick<SendingFixture, "deps">, id: string) {
  const [row]: [{ status: string; current_step: number | null }?] = await f.deps.sql`
    select status, current_step from workflow_executions where id = ${id}`;
  return row;
}

dbTest("duplicate and out-of-order step jobs never run a step twice nor skip one", async () => {
  const f = await fixture();
  const worker = startWorker(f.deps).context;
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome", 0.03), step(2, "sms", "reminder")] });
  const contact = await f.contact({ custom_fields: { phone: "+14155550127" } });
  const res = await f.post("/api/v1/workflows/trigger", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
  });
  const answer = await res.json();
  const executionId = answer.execution_ids[0];
  const job = (stepOrder: number, due: number): Job => ({
    type: "workflow-step",
    id: crypto.randomUUID(),
    workflow_id: wf.id,
    step_order: stepOrder,
    execution_ids: [executionId],
    due_at: due,
    attempt: 0,
  });
  await until(async () => (await executionState(f, executionId))?.status === "SCHEDULED", "the execution");
  // Step 2's job arriving while the execution waits for step 1 does nothing.
  await runJob(worker, job(2, Date.now()));
  assert.deepEqual(await executionState(f, executionId), { status: "SCHEDULED", current_step: 1 });
  assert.equal((await outboxOf(f, answer.trigger_id)).length, 0);
  // Step 1's job delivered twice at once (and the original still to come) sends step 1 once.
  await Promise.all([runJob(worker, job(1, Date.now())), runJob(worker, job(1, Date.now()))]);
  const trigger = await f.waitForTrigger(answer.trigger_id);
  assert.deepEqual(trigger.summary, { total_contacts: 2, sent: 2, failed: 0, filtered: 0 });
  // Redelivered jobs of either step after the end send nothing more; the original delayed job neither.
  await Promise.all([1, 2, 1, 2].map((s) => runJob(worker, job(s, Date.now()))));
  await new Promise((r) => setTimeout(r, 2000));
  assert.deepEqual((await outboxOf(f, answer.trigger_id)).map((m) => m.channel), ["email", "sms"]);
  assert.deepEqual(await executionState(f, executionId), { status: "COMPLETED", current_step: null });
  const history = await (await f.get(`/api/v1/workflows/${wf.id}/executions`)).json();
  assert.deepEqual(history.executions[0].steps.map((s: { status: string }) => s.status), ["SENT", "SENT"]);
});

dbTest("a step job that fires before its due time (a chained delay) waits again", async () => {
  const f = await fixture();
  const worker = startWorker(f.deps).context;
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome", 0.02)] });
  const contact = await f.contact({});
  const answer = await startFor(f, wf.id, contact.external_id);
  const executionId = answer.execution_ids[0];
  await until(async () => (await executionState(f, executionId))?.status === "SCHEDULED", "the execution");
  const due = Date.now() + 60 * 24 * 3_600_000; // 60 days: past the queue's 30-day limit
  await runJob(worker, {
    type: "workflow-step",
    id: crypto.randomUUID(),
    workflow_id: wf.id,
    step_order: 1,
    execution_ids: [executionId],
    due_at: due,
    attempt: 0,
  });
  assert.equal((await outboxOf(f, answer.trigger_id)).length, 0);
  assert.equal((await f.waitForTrigger(answer.trigger_id)).summary.sent, 1);
});

dbTest("statistics of a run over 500 contacts are exact", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, {
    steps: [step(1, "email", "welcome"), step(2, "sms", "reminder"), step(3, "whatsapp", "last")],
  });
  const expected = { sms: { sent: 0, failed: 0 }, whatsapp: { sent: 0, failed: 0 }, email: { sent: 0, failed: 0 } };
  for (let i = 0; i < 500; i++) {
    const noPhone = i % 5 === 0;
    const smsOff = i % 5 === 1;
    const unsubscribed = i % 50 === 7;
    const c = await f.contact({
      custom_fields: noPhone ? {} : { phone: `+1415555${String(1000 + i).padStart(4, "0")}` },
    });
    if (smsOff) {
      await f.deps.sql`update contacts set preferences = jsonb_set(preferences, '{sms,transactional}', 'false')
        where id = ${c.id}`;
    }
    if (unsubscribed) await f.deps.sql`update contacts set is_unsubscribed = true where id = ${c.id}`;
    if (unsubscribed) continue;
    expected.email.sent++;
    if (noPhone) {
      expected.whatsapp.failed++;
      expected.sms.failed++;
      continue;
    }
    expected.whatsapp.sent++;
    if (!smsOff) expected.sms.sent++;
  }
  const { answer, trigger } = await run(f, "/api/v1/workflows/trigger", {
    workflow_id: wf.id,
    recipient_type: "all",
    variables: { plan: "pro" },
  });
  const sent = expected.email.sent + expected.sms.sent + expected.whatsapp.sent;
  const failed = expected.sms.failed + expected.whatsapp.failed;
  assert.deepEqual(trigger.summary, { total_contacts: 3 * 500, sent, failed, filtered: 3 * 500 - sent - failed });
  const started = performance.now();
  const res = await f.get(`/api/v1/workflows/${wf.id}`);
  const took = performance.now() - started;
  assert.equal(res.status, 200);
  const d = await res.json();
  assert.ok(took < 1000, `details took ${took} ms`);
  assert.equal(d.status, "COMPLETED");
  assert.equal(d.trigger_type, "api");
  assert.equal(d.workflow_executions_count, 500);
  assert.deepEqual(d.progress, { processed: 500, total: 500, percentage: 100 });
  assert.ok(d.started_at && d.completed_at && d.duration_seconds >= 0);
  const rate = (s: number, fl: number) => Math.round((s / (s + fl)) * 10_000) / 100;
  const smsCost = expected.sms.sent * 0.0075;
  const waCost = expected.whatsapp.sent * 0.004;
  assert.deepEqual(d.channels, {
    email: { execution_count: 500, total_contacts: 500, sent: expected.email.sent, failed: 0, success_rate: 100 },
    sms: {
      execution_count: 500,
      total_contacts: 500,
      sent: expected.sms.sent,
      failed: expected.sms.failed,
      success_rate: rate(expected.sms.sent, expected.sms.failed),
      estimated_cost: Math.round(smsCost * 1e6) / 1e6,
    },
    whatsapp: {
      execution_count: 500,
      total_contacts: 500,
      sent: expected.whatsapp.sent,
      delivered: 0,
      read: 0,
      failed: expected.whatsapp.failed,
      delivery_rate: 0,
      read_rate: 0,
      estimated_cost: Math.round(waCost * 1e6) / 1e6,
    },
  });
  assert.deepEqual(d.totals, {
    total_contacts: 500,
    total_sent: sent,
    total_failed: failed,
    overall_success_rate: rate(sent, failed),
    total_cost: Math.round((smsCost + waCost) * 1e6) / 1e6,
    currency: "USD",
  });
  // Reports of delivery and reading show in the WhatsApp statistics.
  const waIds = await f.deps.sql<{ message_id: string }[]>`
    select message_id from workflow_step_runs where workflow_id = ${wf.id} and channel_type = 'whatsapp'
      and status = 'SENT' order by message_id limit 10`;
  const ids = waIds.map((r) => r.message_id);
  await f.deps.sql`update messages set delivered_at = now() where id = any(${ids})`;
  await f.deps.sql`update messages set read_at = now() where id = any(${ids.slice(0, 4)})`;
  const after = await (await f.get(`/api/v1/workflows/${wf.id}`)).json();
  assert.equal(after.channels.whatsapp.delivered, 10);
  assert.equal(after.channels.whatsapp.read, 4);
  assert.equal(after.channels.whatsapp.delivery_rate, Math.round((10 / expected.whatsapp.sent) * 10_000) / 100);
  assert.equal(after.channels.whatsapp.read_rate, 40);
  const history = await (await f.get(`/api/v1/workflows/${wf.id}/executions?limit=100&page=5`)).json();
  assert.equal(history.total, 500);
  assert.equal(history.totalPages, 5);
  assert.equal(history.executions.length, 100);
  const detail = await (await f.get(`/api/v1/triggers/${answer.trigger_id}/workflow?limit=1000`)).json();
  assert.equal(detail.total_executions, 500);
  assert.equal(detail.executions.length, 500);
});

dbTest("a redelivered step job re-enqueues the next step of executions whose job was lost", async () => {
  const f = await fixture();
  const worker = startWorker(f.deps).context;
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome"), step(2, "sms", "reminder")] });
  const contact = await f.contact({ custom_fields: { phone: "+14155550128" } });
  // As if the process stopped right after moving the execution to step 2, before enqueueing step 2.
  const triggerId = crypto.randomUUID();
  const executionId = crypto.randomUUID();
  await f.deps.sql`insert into workflow_runs (trigger_id, workflow_id, team_id, source)
    values (${triggerId}, ${wf.id}, ${f.team.id}, 'api')`;
  await f.deps.sql`insert into workflow_executions (id, team_id, workflow_id, trigger_id, contact_id, source, status,
      current_step, next_run_at, started_at)
    values (${executionId}, ${f.team.id}, ${wf.id}, ${triggerId}, ${contact.id}, 'api', 'PROCESSING', 2, now(), now())`;
  await runJob(worker, stepJob(wf.id, 1, [executionId]));
  await until(async () => (await executionState(f, executionId))?.status === "COMPLETED", "step 2");
  assert.deepEqual((await outboxOf(f, triggerId)).map((m) => m.channel), ["sms"]);
});

dbTest("a redelivered last step job completes the trigger its finished executions left processing", async () => {
  const f = await fixture();
  const worker = startWorker(f.deps).context;
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome")] });
  const contact = await f.contact({});
  const answer = await startFor(f, wf.id, contact.external_id);
  const done = await f.waitForTrigger(answer.trigger_id);
  assert.equal(done.status, "completed");
  // As if the process stopped right after finishing the execution, before completing its trigger (the
  // crash test met it: the trigger stayed processing while every message was final).
  await f.deps.sql`update triggers set status = 'processing', completed_at = null where id = ${answer.trigger_id}`;
  assert.equal((await (await f.get(`/api/v1/triggers/${answer.trigger_id}`)).json()).status, "processing");
  await runJob(worker, stepJob(wf.id, 1, answer.execution_ids));
  const trigger = await (await f.get(`/api/v1/triggers/${answer.trigger_id}`)).json();
  assert.equal(trigger.status, "completed");
  assert.deepEqual(trigger.summary, done.summary);
  assert.equal((await outboxOf(f, answer.trigger_id)).length, 1, "the redelivery sends nothing");
});

dbTest("deleting a workflow mid-run stops its executions and completes their trigger", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, { steps: [step(1, "email", "welcome"), step(2, "sms", "reminder", 60)] });
  const contact = await f.contact({ custom_fields: { phone: "+14155550129" } });
  const answer = await startFor(f, wf.id, contact.external_id);
  await until(async () => (await executionState(f, answer.execution_ids[0]))?.status === "SCHEDULED", "step 1");
  const res = await f.app.request(`/api/v1/workflows/${wf.id}`, {
    method: "DELETE",
    headers: { "X-API-Key": f.keys.live },
  });
  assert.equal(res.status, 200);
  const trigger = await f.waitForTrigger(answer.trigger_id);
  assert.equal(trigger.status, "completed");
  assert.equal(await executionState(f, answer.execution_ids[0]), undefined);
  assert.deepEqual((await outboxOf(f, answer.trigger_id)).map((m) => m.channel), ["email"]);
});

dbTest("a start with a test key goes to the outbox only and charges nothing", async () => {
  const f = await fixture();
  const wf = await createWorkflow(f, { steps: [step(1, "sms", "reminder"), step(2, "whatsapp", "last")] });
  const contact = await f.contact({ custom_fields: { phone: "+14155550130" } });
  const [before] = await f.deps.sql`select balance_micros from wallets where team_id = ${f.team.id}`;
  const res = await f.post("/api/v1/workflows/trigger", {
    workflow_id: wf.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
  }, f.keys.test);
  assert.equal(res.status, 201);
  const { trigger_id } = await res.json();
  assert.equal((await f.waitForTrigger(trigger_id)).summary.sent, 2);
  assert.deepEqual((await outboxOf(f, trigger_id)).map((m) => m.channel), ["sms", "whatsapp"]);
  const [after] = await f.deps.sql`select balance_micros from wallets where team_id = ${f.team.id}`;
  assert.equal(after.balance_micros, before.balance_micros);
  const details = await (await f.get(`/api/v1/workflows/${wf.id}`)).json();
  assert.equal(details.totals.total_cost, 0);
});

/**
 * A team whose webhook endpoint is a receiver on loopback (`received`), on a queue of its own whose
 * worker runs on `workerDeps(deps)`, with a one-step email workflow for event `eventType`, and a
 * contact.
 */
async function webhookWorld(eventType: string, workerDeps: (deps: Deps) => Deps = (deps) => deps) {
  const received: { id: string; type: string; data: Record<string, unknown> }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    received.push(JSON.parse(await req.text()));
    return new Response("ok");
  });
  const kv = await Deno.openKv(":memory:");
  const deps = onKv(await testDeps({ WEBHOOK_ALLOW_PRIVATE: true }), kv);
  const worker = startWorker(workerDeps(deps)).context;
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const headers = { "X-API-Key": keys.live, "X-Team-ID": team.id };
  await upsertTemplate(deps.sql, team.id, "email", "hello", { subject: "Hi", html: "<p>hi</p>" });
  const hook = await app.request(
    "/api/v1/webhooks",
    jsonRequest("POST", { url: `http://127.0.0.1:${server.addr.port}/h` }, headers),
  );
  assert.equal(hook.status, 201);
  const wf: { id: string } = await (await app.request(
    "/api/v1/workflows",
    jsonRequest("POST", { name: eventType, event_type: eventType, steps: [step(1, "email", "hello")] }, headers),
  )).json();
  const contact = await createContact(deps.sql, team.id, { email: `h.${crypto.randomUUID()}@example.com` });
  return {
    received,
    deps,
    worker,
    app,
    team,
    headers,
    wf,
    contact,
    async close() {
      await server.shutdown();
      kv.close();
    },
  };
}

dbTest("a finished execution emits workflow.completed, and its trigger trigger.completed, to webhooks", async () => {
  const { received, app, headers, wf, contact, close } = await webhookWorld("hooked");
  const res = await app.request(
    "/api/v1/events/send",
    jsonRequest("POST", { event_name: "hooked", user_info: { email: contact.email } }, headers),
  );
  const { trigger_id } = await res.json();
  await until(() => Promise.resolve(received.some((e) => e.type === "trigger.completed")), "the webhooks");
  await until(() => Promise.resolve(received.some((e) => e.type === "workflow.completed")), "the webhooks");
  const completed = received.find((e) => e.type === "workflow.completed")!;
  assert.equal(completed.data.workflow_id, wf.id);
  assert.equal(completed.data.trigger_id, trigger_id);
  assert.equal(completed.data.contact_id, contact.id);
  assert.equal(completed.data.status, "COMPLETED");
  const triggerEvent = received.find((e) => e.type === "trigger.completed")!;
  assert.equal(triggerEvent.data.trigger_id, trigger_id);
  assert.equal(triggerEvent.data.flow_type, "workflow");
  assert.deepEqual(triggerEvent.data.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  await close();
});

dbTest("the events of a last step that stops before it relays them reach the webhooks once, by the sweep", async () => {
  // The worker records every change, and stops each time before it hands the events over.
  const { received, deps, worker, app, team, headers, wf, contact, close } = await webhookWorld(
    "lost",
    stoppingBeforeWebhooks,
  );
  const answer = await (await app.request(
    "/api/v1/workflows/trigger",
    jsonRequest(
      "POST",
      { workflow_id: wf.id, recipient_type: "contact", contact_external_id: contact.external_id },
      headers,
    ),
  )).json();
  const executionId: string = answer.execution_ids[0];
  const staged = async () => [
    ...await deps.sql<{ id: string; type: string }[]>`
      select id, type from webhook_event_outbox where team_id = ${team.id} order by type`,
  ];
  await until(async () => (await staged()).length === 3, "the staged events");
  const left = await staged();
  assert.deepEqual(left.map((e) => e.type), ["message.sent", "trigger.completed", "workflow.completed"]);
  // The step job, redelivered, finds the execution finished and its trigger final: it stages nothing more.
  await runJob(worker, stepJob(wf.id, 1, [executionId]));
  assert.deepEqual(await staged(), left);
  assert.equal(received.length, 0);
  const later = { ...deps, now: () => Date.now() + EVENT_SWEEP_AGE_MS };
  assert.equal(await sweepEventOutbox(later), 3);
  await until(() => Promise.resolve(received.length === 3), "the events");
  assert.deepEqual(received.map((e) => e.id).sort(), left.map((e) => e.id).sort());
  const completed = received.find((e) => e.type === "workflow.completed")!;
  assert.equal(completed.data.execution_id, executionId);
  assert.equal(completed.data.status, "COMPLETED");
  assert.equal(received.find((e) => e.type === "trigger.completed")!.data.trigger_id, answer.trigger_id);
  // Relayed once: nothing is left to sweep, and nothing more arrives.
  assert.equal(await sweepEventOutbox(later), 0);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(received.length, 3);
  await close();
});

dbTest("an event sent right after a workflow is deactivated or created sees the change", async () => {
  const f = await fixture();
  const event = `plan_changed_${crypto.randomUUID().slice(0, 6)}`;
  const run = async (phone: string) => {
    const contact = await f.contact({ custom_fields: { phone } });
    return await eventRun(f, { event_name: event, user_info: { contact_external_id: contact.external_id } });
  };
  const wf = await createWorkflow(f, { event_type: event, steps: [step(1, "email", "welcome")] });
  // The worker has just read the event's workflows (it keeps them two seconds).
  assert.equal((await run("+14155550140")).trigger.summary.sent, 1);
  const off = await f.app.request(
    `/api/v1/workflows/${wf.id}`,
    jsonRequest("PATCH", { is_active: false }, { "X-API-Key": f.keys.live }),
  );
  assert.equal(off.status, 200);
  const after = await run("+14155550141");
  assert.deepEqual(after.trigger.summary, { total_contacts: 0, sent: 0, failed: 0, filtered: 0 });
  assert.equal((await outboxOf(f, after.answer.trigger_id)).length, 0);
  await createWorkflow(f, { event_type: event, steps: [step(1, "sms", "welcome")] });
  const created = await run("+14155550142");
  assert.deepEqual((await outboxOf(f, created.answer.trigger_id)).map((m) => m.channel), ["sms"]);
});

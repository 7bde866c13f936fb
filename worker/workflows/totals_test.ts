import assert from "node:assert/strict";
import { recordDeliveryState } from "../../api/inbound/queries.ts";
import { findWorkflow } from "../../api/workflows/queries.ts";
import { workflowStatistics } from "../../api/workflows/statistics.ts";
import { workflowBody, workflowSetup } from "../../api/workflows/testing.ts";
import { createContact } from "../../shared/contacts/queries.ts";
import type { Db } from "../../shared/db.ts";
import { dbTest, randomEmail } from "../../shared/testing.ts";
import { advance, claimStep, insertExecutions, type NewExecution, recordStepRuns, type StepRun } from "./queries.ts";

/** The running totals of a workflow as the statistics read them. */
async function totals(db: Db, workflowId: string) {
  const [execution] = await db`
    select executions, started, processed, failed, contacts, first_started_at, last_completed_at,
      (select min(due_at) from workflow_due where workflow_id = ${workflowId}) as scheduled_at
    from workflow_stats where workflow_id = ${workflowId}`;
  const channels = await db`
    select channel_type, executions, contacts, sent, failed, delivered, read, cost_micros
    from workflow_channel_stats where workflow_id = ${workflowId} order by channel_type`;
  return { execution: { ...execution }, channels: channels.map((c) => ({ ...c })) };
}

/** The same, counted afresh from every execution, step run and message of the workflow. */
async function recount(db: Db, workflowId: string) {
  const [execution] = await db`
    select count(*) as executions, count(*) filter (where started_at is not null) as started,
      count(*) filter (where status in ('COMPLETED', 'FAILED')) as processed,
      count(*) filter (where status = 'FAILED') as failed,
      count(distinct contact_id) + count(*) filter (where contact_id is null) as contacts,
      min(started_at) as first_started_at, max(completed_at) as last_completed_at,
      min(next_run_at) filter (where current_step is not null) as scheduled_at
    from workflow_executions where workflow_id = ${workflowId}`;
  const channels = await db`
    select r.channel_type, count(distinct r.execution_id) as executions, count(distinct r.contact_id) as contacts,
      count(*) filter (where r.status = 'SENT') as sent, count(*) filter (where r.status = 'FAILED') as failed,
      count(m.delivered_at) as delivered, count(m.read_at) as read, coalesce(sum(r.cost_micros), 0)::bigint as cost_micros
    from workflow_step_runs r left join messages m on r.channel_type = 'whatsapp' and m.id = r.message_id
    where r.workflow_id = ${workflowId} group by r.channel_type order by r.channel_type`;
  return { execution: { ...execution }, channels: channels.map((c) => ({ ...c })) };
}

async function assertTotalsRight(db: Db, workflowId: string, stage: string) {
  assert.deepEqual(await totals(db, workflowId), await recount(db, workflowId), stage);
}

/** A step run of an execution (its contact as the execution has it). */
function ran(e: NewExecution, status: StepRun["status"], extra: Partial<StepRun> = {}): StepRun {
  return {
    execution_id: e.id,
    contact_id: e.contact_id,
    status,
    message_id: null,
    error: null,
    cost_micros: 0,
    ...extra,
  };
}

/** A sent WhatsApp message of an execution, as the pipeline records it; its provider id. */
async function whatsappMessage(db: Db, teamId: string, e: NewExecution): Promise<{ id: string; providerId: string }> {
  const id = `wa-${crypto.randomUUID()}`;
  const providerId = `wamid.${crypto.randomUUID()}`;
  await db`insert into messages (id, execution_id, recipient, team_id, trigger_id, channel, to_address, contact_id,
      status, provider, provider_message_id, cost_micros)
    values (${id}, ${crypto.randomUUID()}, ${e.contact_id}, ${teamId}, ${e.trigger_id}, 'whatsapp', '+14155550100',
      ${e.contact_id}, 'sent', 'meta', ${providerId}, 4000)`;
  return { id, providerId };
}

dbTest("workflow totals stay those of its rows across starts, steps, failures, reports and redeliveries", async () => {
  const { deps, team, call } = await workflowSetup();
  const db = deps.sql;
  const steps = workflowBody().steps as Record<string, unknown>[];
  const created = await call("POST", "/workflows", {
    ...workflowBody(),
    steps: [...steps, { ...steps[0], step_order: 3, channel_type: "whatsapp", step_name: "Last word" }],
  });
  assert.equal(created.status, 201);
  const workflowId: string = created.body.id;
  const [a, b, c] = await Promise.all(
    [1, 2, 3].map(() => createContact(db, team.id, { email: randomEmail(), custom_fields: {} })),
  );
  let now = Date.now();
  const execution = (contactId: string): NewExecution => ({
    id: crypto.randomUUID(),
    team_id: team.id,
    workflow_id: workflowId,
    trigger_id: crypto.randomUUID(),
    contact_id: contactId,
    source: "api",
    first: { step_order: 1, due: now },
  });
  // Contact a starts twice: four executions, three contacts.
  const [e1, e2, e3, e4] = [execution(a.id), execution(b.id), execution(a.id), execution(c.id)];
  const all = [e1, e2, e3, e4];
  const ids = (es: NewExecution[]) => es.map((e) => e.id);
  for (let delivery = 0; delivery < 2; delivery++) await insertExecutions(db, all, now);
  await assertTotalsRight(db, workflowId, "created, a start redelivered");

  for (let delivery = 0; delivery < 2; delivery++) await claimStep(db, ids(all), 1, now);
  const email = { step_order: 1, channel_type: "email" };
  const emailRuns = [ran(e1, "SENT"), ran(e2, "SENT"), ran(e3, "FAILED", { error: "bounced" }), ran(e4, "SENT")];
  for (let delivery = 0; delivery < 2; delivery++) await recordStepRuns(db, workflowId, email, emailRuns);
  const later = { step_order: 2, due: now + 3_600_000 };
  for (let delivery = 0; delivery < 2; delivery++) await advance(db, ids(all), 1, later, now);
  await assertTotalsRight(db, workflowId, "step 1 run and recorded twice, all scheduled for step 2");

  now = later.due;
  await claimStep(db, ids(all), 2, now);
  const sms = { step_order: 2, channel_type: "sms" };
  const smsRuns = [
    ran(e1, "SENT", { cost_micros: 7500 }),
    ran(e2, "FAILED", { error: "no phone" }),
    ran(e3, "SENT", { cost_micros: 7500 }),
    ran(e4, "FILTERED"),
  ];
  for (let delivery = 0; delivery < 2; delivery++) await recordStepRuns(db, workflowId, sms, smsRuns);
  await advance(db, ids([e1, e2]), 2, { step_order: 3, due: now }, now);
  for (let delivery = 0; delivery < 2; delivery++) await advance(db, ids([e3, e4]), 2, undefined, now);
  await assertTotalsRight(db, workflowId, "step 2: two go on, two finish (one failed)");

  // One WhatsApp report comes before its step run is recorded, the others after.
  await claimStep(db, ids([e1, e2]), 3, now);
  const [m1, m2] = [await whatsappMessage(db, team.id, e1), await whatsappMessage(db, team.id, e2)];
  await recordDeliveryState(db, m1.providerId, "delivered");
  const whatsapp = { step_order: 3, channel_type: "whatsapp" };
  const waRuns = [
    ran(e1, "SENT", { message_id: m1.id, cost_micros: 4000 }),
    ran(e2, "SENT", { message_id: m2.id, cost_micros: 4000 }),
  ];
  for (let delivery = 0; delivery < 2; delivery++) await recordStepRuns(db, workflowId, whatsapp, waRuns);
  for (let report = 0; report < 2; report++) {
    await recordDeliveryState(db, m1.providerId, "read");
    await recordDeliveryState(db, m2.providerId, "delivered");
  }
  await advance(db, ids([e1, e2]), 3, undefined, now);
  await assertTotalsRight(db, workflowId, "step 3 with its reports, all finished");

  const stats = await workflowStatistics(db, (await findWorkflow(db, team.id, workflowId))!, now);
  assert.equal(stats.status, "COMPLETED");
  assert.equal(stats.scheduled_at, null);
  assert.deepEqual(stats.progress, { processed: 4, total: 4, percentage: 100 });
  assert.deepEqual(
    { contacts: stats.totals.total_contacts, sent: stats.totals.total_sent, failed: stats.totals.total_failed },
    { contacts: 3, sent: 7, failed: 2 },
  );
  assert.deepEqual(stats.channels.email, {
    execution_count: 4,
    total_contacts: 3,
    sent: 3,
    failed: 1,
    success_rate: 75,
  });
  assert.deepEqual(
    stats.channels.whatsapp,
    {
      execution_count: 2,
      total_contacts: 2,
      sent: 2,
      delivered: 2,
      read: 1,
      failed: 0,
      delivery_rate: 100,
      read_rate: 50,
      estimated_cost: 0.008,
    },
  );
});

dbTest("a workflow's contact count keeps a contact deleted since, once", async () => {
  const { deps, team, call } = await workflowSetup();
  const db = deps.sql;
  const created = await call("POST", "/workflows", workflowBody());
  const workflowId: string = created.body.id;
  const contact = await createContact(db, team.id, { email: randomEmail(), custom_fields: {} });
  const now = Date.now();
  const starts = [1, 2].map((): NewExecution => ({
    id: crypto.randomUUID(),
    team_id: team.id,
    workflow_id: workflowId,
    trigger_id: crypto.randomUUID(),
    contact_id: contact.id,
    source: "api",
    first: { step_order: 1, due: now },
  }));
  await insertExecutions(db, starts, now);
  await db`delete from contacts where id = ${contact.id}`;
  const stats = await workflowStatistics(db, (await findWorkflow(db, team.id, workflowId))!, now);
  assert.equal(stats.workflow_executions_count, 2);
  assert.equal(stats.totals.total_contacts, 1);
  assert.equal(stats.status, "PENDING");
  assert.equal(stats.scheduled_at, new Date(now).toISOString());
});

dbTest("deleting a workflow deletes its running totals with it", async () => {
  const { deps, team, call } = await workflowSetup();
  const db = deps.sql;
  const workflowId: string = (await call("POST", "/workflows", workflowBody())).body.id;
  const contact = await createContact(db, team.id, { email: randomEmail(), custom_fields: {} });
  const now = Date.now();
  const started: NewExecution = {
    id: crypto.randomUUID(),
    team_id: team.id,
    workflow_id: workflowId,
    trigger_id: crypto.randomUUID(),
    contact_id: contact.id,
    source: "api",
    first: { step_order: 1, due: now },
  };
  await insertExecutions(db, [started], now);
  await recordStepRuns(db, workflowId, { step_order: 1, channel_type: "email" }, [ran(started, "SENT")]);
  const left = async () => {
    const [row] = await db`select
      (select count(*) from workflow_stats where workflow_id = ${workflowId}) +
      (select count(*) from workflow_channel_stats where workflow_id = ${workflowId}) +
      (select count(*) from workflow_reach where workflow_id = ${workflowId}) +
      (select count(*) from workflow_due where workflow_id = ${workflowId}) as n`;
    return row.n;
  };
  assert.equal(await left(), 5);
  assert.equal((await call("DELETE", `/workflows/${workflowId}`)).status, 200);
  assert.equal(await left(), 0);
});

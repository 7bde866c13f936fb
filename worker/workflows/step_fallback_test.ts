import assert from "node:assert/strict";
import { dbTest } from "../../shared/testing.ts";
import { createWorkerContext } from "../context.ts";
import { fallbackFixture, REFUSED, twilioStatus } from "../fallback_testing.ts";
import type { Job } from "../jobs.ts";
import { runJob } from "../queue.ts";
import type { SendingFixture } from "../testing.ts";

/** A workflow of one WhatsApp step (template `order`) falling back to SMS. */
async function whatsappThenSms(f: SendingFixture, configuration: Record<string, unknown> = {}): Promise<string> {
  const res = await f.post("/api/v1/workflows", {
    name: `fallback ${crypto.randomUUID().slice(0, 6)}`,
    event_type: "order_shipped",
    steps: [{
      step_order: 1,
      channel_type: "whatsapp",
      configuration: { template_id: "order", fallback_channels: ["sms"], ...configuration },
    }],
  });
  assert.equal(res.status, 201, JSON.stringify(await res.clone().json()));
  return (await res.json()).id;
}

/** The workflow's messages: channel, address, status, cost (micro-dollars), by channel then address. */
async function stepMessages(f: SendingFixture, triggerId: string) {
  const rows = await f.deps.sql<{ channel: string; to_address: string | null; status: string; cost: number }[]>`
    select channel, to_address, status, cost_micros::int as cost from messages where trigger_id = ${triggerId}
    order by channel, to_address nulls first`;
  return rows.map((r) => [r.channel, r.to_address, r.status, r.cost]);
}

/** A start of the workflow for `contactIds`, its executions at step 1, and the step's job (due now). */
async function stepJob(f: SendingFixture, workflowId: string, contactIds: string[]) {
  const triggerId = crypto.randomUUID();
  await f.deps.sql`insert into workflow_runs (trigger_id, workflow_id, team_id, source)
    values (${triggerId}, ${workflowId}, ${f.team.id}, 'api')`;
  const executionIds: string[] = [];
  for (const contactId of contactIds) {
    const id = crypto.randomUUID();
    executionIds.push(id);
    await f.deps.sql`insert into workflow_executions (id, team_id, workflow_id, trigger_id, contact_id, source,
        status, current_step, next_run_at, started_at)
      values (${id}, ${f.team.id}, ${workflowId}, ${triggerId}, ${contactId}, 'api', 'PROCESSING', 1, now(), now())`;
  }
  const job: Job = {
    type: "workflow-step",
    id: crypto.randomUUID(),
    workflow_id: workflowId,
    step_order: 1,
    execution_ids: executionIds,
    due_at: Date.now(),
    attempt: 0,
  };
  return { job, triggerId, executionIds };
}

dbTest(
  "a WhatsApp step falls back to SMS for the failed and the unreachable, charged and counted as SMS, never around an unsubscribe",
  async () => {
    const { f, requestsTo, close } = await fallbackFixture({ "whatsapp:+447700900111": REFUSED });
    try {
      const workflowId = await whatsappThenSms(f);
      const refused = await f.contact({ custom_fields: { phone: "+447700900111" } });
      const reached = await f.contact({ custom_fields: { phone: "+447700900112" } });
      const noPhone = await f.contact({ email: "nophone@example.com" });
      const unsubscribed = await f.contact({ custom_fields: { phone: "+447700900114" } });
      await f.deps.sql`update contacts set is_unsubscribed = true where id = ${unsubscribed.id}`;
      const res = await f.post("/api/v1/workflows/trigger", {
        workflow_id: workflowId,
        recipient_type: "all",
        variables: { n: "5" },
      });
      assert.equal(res.status, 201, JSON.stringify(await res.clone().json()));
      const { trigger_id } = await res.json();
      assert.equal((await f.waitForTrigger(trigger_id)).status, "completed");

      assert.equal(requestsTo("whatsapp:+447700900111"), 1);
      assert.equal(requestsTo("+447700900111"), 1, "the refused WhatsApp number got the SMS");
      assert.equal(requestsTo("whatsapp:+447700900112"), 1);
      assert.equal(requestsTo("+447700900112"), 0, "WhatsApp reached it: no SMS");
      assert.equal(requestsTo("+447700900114") + requestsTo("whatsapp:+447700900114"), 0, "unsubscribed: nothing");
      const wa = await stepMessages(f, trigger_id);
      assert.deepEqual(wa.filter((m) => m[0] === "sms"), [
        ["sms", null, "failed", 0],
        ["sms", "+447700900111", "sent", 7_500],
      ]);
      assert.equal(wa.filter((m) => m[0] === "whatsapp").length, 4);

      const history = await (await f.get(`/api/v1/workflows/${workflowId}/executions?limit=10`)).json();
      const runs = new Map<string, string[]>(
        history.executions.map((
          e: { contact_id: string; steps: { channel_type: string; status: string }[] },
        ) => [e.contact_id, e.steps.map((s) => `${s.channel_type} ${s.status}`)]),
      );
      assert.deepEqual(runs.get(refused.id), ["sms SENT"]);
      assert.deepEqual(runs.get(reached.id), ["whatsapp SENT"]);
      assert.deepEqual(runs.get(noPhone.id), ["sms FAILED"]);
      assert.deepEqual(runs.get(unsubscribed.id), ["whatsapp FILTERED"]);

      const stats = await (await f.get(`/api/v1/workflows/${workflowId}`)).json();
      assert.equal(stats.channels.sms.sent, 1);
      assert.equal(stats.channels.sms.failed, 1);
      assert.equal(stats.channels.sms.estimated_cost, 0.0075);
      assert.equal(stats.channels.whatsapp.sent, 1);
      assert.equal(stats.channels.whatsapp.failed, 0);
    } finally {
      await close();
    }
  },
);

dbTest("a step job run again after its messages went out sends no channel's message twice", async () => {
  const { f, requestsTo, close } = await fallbackFixture({ "whatsapp:+447700900121": REFUSED });
  try {
    const workflowId = await whatsappThenSms(f);
    const contact = await f.contact({ custom_fields: { phone: "+447700900121" } });
    const { job, triggerId, executionIds: [executionId] } = await stepJob(f, workflowId, [contact.id]);
    const worker = createWorkerContext(f.deps);
    await runJob(worker, job);
    // As if the process stopped after sending, before moving the execution on: the job comes again.
    await f.deps.sql`update workflow_executions set current_step = 1, status = 'PROCESSING' where id = ${executionId}`;
    await runJob(worker, { ...job, id: crypto.randomUUID() });
    await runJob(worker, { ...job, id: crypto.randomUUID() });
    assert.equal(requestsTo("whatsapp:+447700900121"), 1);
    assert.equal(requestsTo("+447700900121"), 1);
    assert.deepEqual(await stepMessages(f, triggerId), [
      ["sms", "+447700900121", "sent", 7_500],
      ["whatsapp", "+447700900121", "failed", 0],
    ]);
    const [run] = await f.deps.sql<{ channel_type: string; status: string }[]>`
      select channel_type, status from workflow_step_runs where execution_id = ${executionId}`;
    assert.deepEqual(run, { channel_type: "sms", status: "SENT" });
  } finally {
    await close();
  }
});

dbTest(
  "a marketing WhatsApp step falls back as promotional: a contact who refuses promotional SMS gets none",
  async () => {
    const { f, requestsTo, close } = await fallbackFixture({
      "whatsapp:+447700900131": REFUSED,
      "whatsapp:+447700900132": REFUSED,
    });
    try {
      const workflowId = await whatsappThenSms(f, { conversation_category: "MARKETING" });
      const optedOut = await f.contact({ custom_fields: { phone: "+447700900131" } });
      const other = await f.contact({ custom_fields: { phone: "+447700900132" } });
      // WhatsApp marketing needs an opt-in: both have it, and WhatsApp refuses both numbers.
      await f.deps.sql`update contacts set preferences = jsonb_set(preferences, '{whatsapp,promotional}', 'true')
        where id in (${optedOut.id}, ${other.id})`;
      await f.deps.sql`update contacts set preferences = jsonb_set(preferences, '{sms,promotional}', 'false')
        where id = ${optedOut.id}`;
      const res = await f.post("/api/v1/workflows/trigger", { workflow_id: workflowId, recipient_type: "all" });
      assert.equal(res.status, 201, JSON.stringify(await res.clone().json()));
      const { trigger_id } = await res.json();
      assert.equal((await f.waitForTrigger(trigger_id)).status, "completed");
      assert.equal(requestsTo("+447700900131"), 0, "promotional SMS refused: no SMS");
      assert.equal(requestsTo("+447700900132"), 1);
      const [run] = await f.deps.sql<{ channel_type: string; status: string }[]>`
      select r.channel_type, r.status from workflow_step_runs r join workflow_executions e on e.id = r.execution_id
      where e.contact_id = ${optedOut.id}`;
      assert.deepEqual(run, { channel_type: "sms", status: "FILTERED" });
    } finally {
      await close();
    }
  },
);

dbTest(
  "a WhatsApp step with fallback_after_minutes sends the SMS after the wait only to the contact with no delivery report",
  async () => {
    const { f, requestsTo, close } = await fallbackFixture();
    try {
      const workflowId = await whatsappThenSms(f, { fallback_after_minutes: 2.5 });
      const reported = await f.contact({ custom_fields: { phone: "+447700900141" } });
      const silent = await f.contact({ custom_fields: { phone: "+447700900142" } });
      const { job, executionIds } = await stepJob(f, workflowId, [reported.id, silent.id]);
      // The worker on a clock of the test's own: the wait passes without sleeping.
      let clock = job.due_at;
      const worker = createWorkerContext({ ...f.deps, now: () => clock });
      await runJob(worker, job);
      assert.equal(requestsTo("whatsapp:+447700900141"), 1);
      assert.equal(requestsTo("whatsapp:+447700900142"), 1);
      assert.deepEqual(await states(f, executionIds), ["PROCESSING 1", "PROCESSING 1"], "held at the step");

      // Twilio reports the first contact's message delivered, through the status callback.
      const [{ sid }] = await f.deps.sql<{ sid: string }[]>`
        select provider_message_id as sid from messages where contact_id = ${reported.id} and channel = 'whatsapp'`;
      const status = await f.app.request(...twilioStatus({ MessageSid: sid, MessageStatus: "delivered" }));
      assert.equal(status.status, 204);

      // A redelivery of the step's job within the wait: the delivered contact goes on, the other waits.
      clock += 60_000;
      await runJob(worker, { ...job, id: crypto.randomUUID() });
      assert.equal(requestsTo("+447700900141") + requestsTo("+447700900142"), 0, "no SMS within the wait");
      assert.deepEqual(await states(f, executionIds), ["COMPLETED null", "PROCESSING 1"]);

      // The wait is over: the contact with no report falls back to SMS; the job coming again sends nothing more.
      clock = job.due_at + 150_000;
      const wait = { ...job, id: crypto.randomUUID(), due_at: clock };
      await runJob(worker, wait);
      await runJob(worker, { ...wait, id: crypto.randomUUID() });
      assert.equal(requestsTo("+447700900142"), 1, "no report within the time: SMS");
      assert.equal(requestsTo("+447700900141"), 0, "reported delivered: no SMS");
      assert.equal(requestsTo("whatsapp:+447700900141") + requestsTo("whatsapp:+447700900142"), 2);
      assert.deepEqual(await states(f, executionIds), ["COMPLETED null", "COMPLETED null"]);
      const runs = await f.deps.sql<{ contact_id: string; channel_type: string; status: string }[]>`
        select contact_id, channel_type, status from workflow_step_runs where execution_id = any(${executionIds}::uuid[])`;
      assert.deepEqual(
        new Map(runs.map((r) => [r.contact_id, `${r.channel_type} ${r.status}`])),
        new Map([[reported.id, "whatsapp SENT"], [silent.id, "sms SENT"]]),
      );
    } finally {
      await close();
    }
  },
);

/** Each execution's status and current step, in the order of `ids`. */
async function states(f: SendingFixture, ids: string[]): Promise<string[]> {
  const rows = await f.deps.sql<{ id: string; status: string; current_step: number | null }[]>`
    select id, status, current_step from workflow_executions where id = any(${ids}::uuid[])`;
  const byId = new Map(rows.map((r) => [r.id, `${r.status} ${r.current_step}`]));
  return ids.map((id) => byId.get(id) ?? "missing");
}

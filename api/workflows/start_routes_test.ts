import assert from "node:assert/strict";
import { createContact } from "../../shared/contacts/queries.ts";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { createWorkflow } from "./queries.ts";
import { CreateWorkflowBody } from "./schemas.ts";
import { workflowBody, workflowSetup } from "./testing.ts";

async function startSetup() {
  const setup = await workflowSetup();
  const workflow = (await setup.call("POST", "/workflows", workflowBody())).body;
  const contact = await createContact(setup.deps.sql, setup.team.id, { email: `c.${crypto.randomUUID()}@example.com` });
  return { ...setup, workflow, contact };
}

dbTest("POST /workflows/trigger for a contact answers 201 with the trigger and the execution id", async () => {
  const { call, workflow, contact } = await startSetup();
  const res = await call("POST", "/workflows/trigger", {
    workflow_id: workflow.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    variables: { plan: "pro" },
  });
  assert.equal(res.status, 201);
  const body = res.body;
  assert.equal(body.success, true);
  assert.match(body.trigger_id, /^[0-9a-f-]{36}$/);
  assert.match(body.job_id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.equal(body.execution_ids.length, 1);
  assert.match(body.execution_ids[0], /^[0-9a-f-]{36}$/);
  assert.equal(body.message, "Workflow triggered successfully");
  assert.equal(body.scheduled_for, undefined);
  assert.deepEqual(body.data, { trigger_id: body.trigger_id, job_id: body.job_id });
  const trigger = await call("GET", `/triggers/${body.trigger_id}`);
  assert.equal(trigger.status, 200);
  assert.equal(trigger.body.flow_type, "workflow");
  assert.equal(trigger.body.details_endpoint, `/api/v1/triggers/${body.trigger_id}/workflow`);
  const detail = await call("GET", `/triggers/${body.trigger_id}/workflow`);
  assert.equal(detail.status, 200);
  assert.equal(detail.body.flow_type, "workflow");
  assert.equal(detail.body.workflow_id, workflow.id);
  assert.equal(detail.body.workflow_name, workflow.name);
});

dbTest("POST /workflows/trigger by workflow_name, to a tag or to all, with trigger_at schedules the run", async () => {
  const { call, workflow } = await startSetup();
  const at = new Date(Date.now() + 3_600_000).toISOString();
  for (const target of [{ recipient_type: "tag", tag: ["vip", "beta"] }, { recipient_type: "all" }]) {
    const res = await call("POST", "/workflows/trigger", { workflow_name: workflow.name, ...target, trigger_at: at });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.execution_ids, []);
    assert.equal(res.body.message, "Workflow scheduled successfully");
    assert.equal(res.body.scheduled_for, at);
    const trigger = await call("GET", `/triggers/${res.body.trigger_id}`);
    assert.equal(trigger.body.status, "pending");
    assert.equal(trigger.body.scheduled_for, at);
  }
  // The other schedule field names work too.
  const alias = await call("POST", "/workflows/send", {
    workflow_id: workflow.id,
    recipient_type: "all",
    triggerAt: at,
  });
  assert.equal(alias.body.scheduled_for, at);
});

dbTest("a scheduled start for a contact shows its promised execution as SCHEDULED until it runs", async () => {
  const { call, workflow, contact } = await startSetup();
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const res = await call("POST", "/workflows/trigger", {
    workflow_id: workflow.id,
    recipient_type: "contact",
    contact_external_id: contact.external_id,
    trigger_at: at,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body.execution_ids.length, 1);
  const view = await call("GET", `/triggers/${res.body.trigger_id}/workflow`);
  assert.equal(view.status, 200);
  assert.equal(view.body.status, "pending");
  assert.equal(view.body.total_executions, 1);
  assert.deepEqual(view.body.executions, [{
    id: res.body.execution_ids[0],
    workflow_id: workflow.id,
    contact_id: contact.id,
    status: "SCHEDULED",
    current_step: null,
  }]);
});

dbTest("POST /workflows/trigger and /send answer 400 for an invalid body", async () => {
  const { call, workflow, contact } = await startSetup();
  const cases: [Record<string, unknown>, string][] = [
    [{ recipient_type: "all" }, "workflow_id or workflow_name is required"],
    [{ workflow_id: workflow.id }, "recipient_type should not be empty"],
    [{ workflow_id: workflow.id, recipient_type: "segment" }, "recipient_type must be one of: contact, tag, all"],
    [{ workflow_id: workflow.id, recipient_type: "contact" }, "contact_external_id should not be empty"],
    [{ workflow_id: workflow.id, recipient_type: "tag" }, "tag should not be empty"],
    [{ workflow_id: workflow.id, recipient_type: "tag", tag: [] }, "tag should not be empty"],
    [
      { workflow_id: workflow.id, recipient_type: "all", channel_variables: { push: {} } },
      "channel_variables has unknown properties: push",
    ],
  ];
  for (const path of ["/workflows/trigger", "/workflows/send"]) {
    for (const [body, line] of cases) {
      const res = await call("POST", path, body);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.ok(res.body.message.includes(line), `${JSON.stringify(res.body.message)} lacks '${line}'`);
    }
    const bad = await call("POST", path, { workflow_id: workflow.id, recipient_type: "all", trigger_at: "soon" });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, "Invalid trigger_at format");
    const past = await call("POST", path, {
      workflow_id: workflow.id,
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      trigger_at: "2020-01-01T00:00:00Z",
    });
    assert.equal(past.status, 400);
    assert.equal(past.body.message, "trigger_at must be a future date");
  }
  const override = await call("POST", "/workflows/send", {
    workflow_id: workflow.id,
    recipient_type: "all",
    steps_override: { first: { delay_minutes: 1 } },
  });
  assert.equal(override.status, 400);
  assert.deepEqual(override.body.message, ["steps_override.first is invalid"]);
});

dbTest(
  "POST /workflows/trigger answers 404 for an unknown workflow or contact, 400 for an inactive workflow",
  async () => {
    const { call, workflow, deps } = await startSetup();
    const other = await testTeam(deps);
    const foreign = await createWorkflow(deps.sql, other.team.id, CreateWorkflowBody.parse(workflowBody()));
    for (
      const by of [
        { workflow_id: crypto.randomUUID() },
        { workflow_id: "nope" },
        { workflow_name: "No such" },
        { workflow_id: foreign.id },
        { workflow_name: foreign.name },
      ]
    ) {
      const res = await call("POST", "/workflows/trigger", { ...by, recipient_type: "all" });
      assert.equal(res.status, 404, JSON.stringify(by));
      assert.deepEqual(res.body, {
        statusCode: 404,
        message: "Workflow not found",
        error: "Not Found",
        code: "workflow_not_found",
      });
    }
    const contact = await call("POST", "/workflows/trigger", {
      workflow_id: workflow.id,
      recipient_type: "contact",
      contact_external_id: "ghost",
    });
    assert.equal(contact.status, 404);
    assert.equal(contact.body.message, "Contact with external_id 'ghost' not found");
    await call("PATCH", `/workflows/${workflow.id}`, { is_active: false });
    const inactive = await call("POST", "/workflows/send", { workflow_id: workflow.id, recipient_type: "all" });
    assert.equal(inactive.status, 400);
    assert.equal(inactive.body.message, "Workflow is not active");
  },
);

dbTest("POST /workflows/trigger replays its first answer for a repeated Idempotency-Key", async () => {
  const { call, workflow } = await startSetup();
  const body = { workflow_id: workflow.id, recipient_type: "all" };
  const first = await call("POST", "/workflows/trigger", body, { "Idempotency-Key": "wf-1" });
  const again = await call("POST", "/workflows/trigger", body, { "Idempotency-Key": "wf-1" });
  assert.equal(again.status, 201);
  assert.deepEqual(again.body, first.body);
});

dbTest("workflow starts need a secret key", async () => {
  const { call, workflow, keys } = await startSetup();
  const res = await call("POST", "/workflows/trigger", { workflow_id: workflow.id, recipient_type: "all" }, {
    "X-API-Key": keys.publishable,
  });
  assert.equal(res.status, 403);
});

dbTest(
  "GET /triggers/{id}/workflow is 404 for an unknown or another team's trigger, and each view refuses the other kind",
  async () => {
    const { call, workflow, deps } = await startSetup();
    const started = await call("POST", "/workflows/trigger", { workflow_id: workflow.id, recipient_type: "all" });
    const other = await testTeam(deps);
    for (
      const [id, key] of [
        [crypto.randomUUID(), undefined],
        ["not-a-uuid", undefined],
        [started.body.trigger_id, other.keys.live],
      ] as const
    ) {
      const res = await call("GET", `/triggers/${id}/workflow`, undefined, key ? { "X-API-Key": key } : {});
      assert.equal(res.status, 404);
      assert.equal(res.body.message, "Trigger not found");
    }
    // A direct send's trigger exists, but is no workflow trigger: the answer says so.
    const sms = await call("POST", "/messages/send", {
      recipient_type: "direct_email",
      direct_email: "a@example.com",
      subject: "S",
      content: "C",
    });
    assert.equal(sms.status, 201, JSON.stringify(sms.body));
    // And the other way round: a workflow trigger has no direct view.
    for (
      const [id, asked, other] of [
        [sms.body.trigger_id, "workflow", "direct"],
        [started.body.trigger_id, "direct", "workflow"],
      ]
    ) {
      const res = await call("GET", `/triggers/${id}/${asked}`);
      assert.equal(res.status, 404, asked);
      assert.equal(res.body.code, `not_a_${asked}_trigger`);
      assert.equal(
        res.body.message,
        `Trigger is not a ${asked} trigger: see GET /api/v1/triggers/{trigger_id}/${other}`,
      );
    }
  },
);

import assert from "node:assert/strict";
import { MAX_ID_LENGTH } from "../../shared/http/schemas.ts";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { workflowBody, workflowSetup } from "./testing.ts";

dbTest("POST /workflows creates a workflow with its steps in step_order and defaults filled in", async () => {
  const { call } = await workflowSetup();
  const body = workflowBody({
    steps: [
      { step_order: 2, channel_type: "sms", configuration: { template_id: "reminder", delay_minutes: 0.5 } },
      {
        step_order: 1,
        channel_type: "email",
        step_name: "Hello",
        configuration: { template_key: "welcome", delay_minutes: 0, variables: { plan: "pro" } },
      },
    ],
  });
  const res = await call("POST", "/workflows", body);
  assert.equal(res.status, 201);
  const w = res.body;
  assert.match(w.id, /^[0-9a-f-]{36}$/);
  assert.equal(w.name, body.name);
  assert.equal(w.description, "Welcome new users");
  assert.equal(w.event_type, "user_signup");
  assert.equal(w.is_active, true);
  assert.deepEqual(w.conditions, {});
  assert.match(w.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.deepEqual(w.steps.map((s: { step_order: number }) => s.step_order), [1, 2]);
  assert.deepEqual(
    { ...w.steps[0], id: undefined },
    {
      id: undefined,
      step_order: 1,
      channel_type: "email",
      step_name: "Hello",
      is_active: true,
      configuration: { template_id: "welcome", delay_minutes: 0, variables: { plan: "pro" } },
    },
  );
  assert.equal(w.steps[1].step_name, "Step 2");
  assert.equal(w.steps[1].configuration.delay_minutes, 0.5);
});

dbTest("POST /workflows keeps conditions and is_active as given", async () => {
  const { call } = await workflowSetup();
  const conditions = { tags: ["vip", "beta"], segment_id: "seg-1", cooldown_minutes: 30 };
  const res = await call("POST", "/workflows", workflowBody({ is_active: false, conditions }));
  assert.equal(res.status, 201);
  assert.equal(res.body.is_active, false);
  assert.deepEqual(res.body.conditions, conditions);
});

dbTest("POST /workflows answers 400 with one line per problem for an invalid body", async () => {
  const { call } = await workflowSetup();
  const cases: [Record<string, unknown>, string][] = [
    [{ name: undefined }, "name should not be empty"],
    [{ name: "   " }, "name should not be empty"],
    [{ event_type: undefined }, "event_type should not be empty"],
    [{ steps: [] }, "steps must contain at least 1 elements"],
    [{ steps: undefined }, "steps should not be empty"],
    [
      { steps: [{ step_order: 1, channel_type: "push", configuration: { template_id: "welcome", delay_minutes: 0 } }] },
      "steps.0.channel_type must be one of: email, sms, whatsapp",
    ],
    [
      {
        steps: [{ step_order: 1, channel_type: "email", configuration: { template_id: "welcome", delay_minutes: -1 } }],
      },
      "steps.0.configuration.delay_minutes must not be less than 0",
    ],
    [
      { steps: [{ step_order: 0, channel_type: "email", configuration: { template_id: "welcome" } }] },
      "steps.0.step_order must not be less than 1",
    ],
    [
      { steps: [{ step_order: 1, channel_type: "email", configuration: {} }] },
      "steps.0.configuration.template_id should not be empty",
    ],
    [
      {
        steps: [
          { step_order: 1, channel_type: "email", configuration: { template_id: "welcome" } },
          { step_order: 1, channel_type: "sms", configuration: { template_id: "welcome" } },
        ],
      },
      "steps must have unique step_order values",
    ],
    [
      {
        steps: [{
          step_order: 1,
          channel_type: "whatsapp",
          configuration: { template_id: "welcome", fallback_after_minutes: 5 },
        }],
      },
      "fallback_after_minutes needs fallback_channels",
    ],
    [
      {
        steps: [{
          step_order: 1,
          channel_type: "whatsapp",
          configuration: { template_id: "welcome", fallback_channels: ["sms"], fallback_after_minutes: 1441 },
        }],
      },
      "fallback_after_minutes must be more than 0 and at most 1440",
    ],
    [
      {
        steps: [{
          step_order: 1,
          channel_type: "whatsapp",
          configuration: { template_id: "welcome", fallback_channels: ["sms"], fallback_after_minutes: 0 },
        }],
      },
      "fallback_after_minutes must be more than 0 and at most 1440",
    ],
    [
      {
        steps: [{
          step_order: 1,
          channel_type: "sms",
          configuration: { template_id: "welcome", fallback_channels: ["email"], fallback_after_minutes: 5 },
        }],
      },
      "fallback_after_minutes needs a WhatsApp message followed by a fallback channel",
    ],
    [
      {
        steps: [{
          step_order: 1,
          channel_type: "email",
          configuration: { template_id: "welcome", fallback_channels: ["push"] },
        }],
      },
      "steps.0.configuration.fallback_channels.0 must be one of: email, sms, whatsapp",
    ],
    [
      {
        steps: [{
          step_order: 1,
          channel_type: "sms",
          configuration: { template_id: "welcome", fallback_channels: ["sms"] },
        }],
      },
      "fallback_channels cannot name the step's own channel (sms)",
    ],
    [
      {
        steps: [{
          step_order: 1,
          channel_type: "whatsapp",
          configuration: { template_id: "welcome", fallback_channels: ["sms", "sms"] },
        }],
      },
      "fallback_channels names sms twice",
    ],
    [{ conditions: { cooldown: 5 } }, "conditions has unknown properties: cooldown"],
    [{ conditions: { tags: ["x".repeat(256)] } }, "conditions.tags.0 must be at most 255 characters"],
  ];
  for (const [override, line] of cases) {
    const res = await call("POST", "/workflows", workflowBody(override));
    assert.equal(res.status, 400, JSON.stringify(override));
    assert.equal(res.body.statusCode, 400);
    assert.equal(res.body.error, "Bad Request");
    assert.ok(Array.isArray(res.body.message), JSON.stringify(res.body));
    assert.ok(res.body.message.includes(line), `${JSON.stringify(res.body.message)} lacks '${line}'`);
  }
});

dbTest("POST /workflows refuses a step whose template does not exist on its channel", async () => {
  const { call } = await workflowSetup();
  const res = await call(
    "POST",
    "/workflows",
    workflowBody({
      steps: [
        { step_order: 1, channel_type: "email", configuration: { template_id: "welcome" } },
        { step_order: 2, channel_type: "whatsapp", configuration: { template_id: "missing" } },
      ],
    }),
  );
  assert.equal(res.status, 400);
  assert.equal(res.body.message, "Template 'missing' not found for team");
  assert.deepEqual(res.body.details, { field: "steps.1.configuration.template_id", code: "not_found" });
  const list = await call("GET", "/workflows");
  assert.equal(list.body.total, 0);
});

dbTest("POST /workflows keeps a step's fallback channels when each has the template, approved for SMS", async () => {
  const { call, deps, team } = await workflowSetup();
  const step = (fallback_channels: string[]) => ({
    steps: [{ step_order: 1, channel_type: "whatsapp", configuration: { template_id: "welcome", fallback_channels } }],
  });
  const ok = await call("POST", "/workflows", workflowBody(step(["sms", "email"])));
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  assert.deepEqual(ok.body.steps[0].configuration.fallback_channels, ["sms", "email"]);

  await deps.sql`update templates set status = 'pending' where team_id = ${team.id} and channel = 'sms'`;
  const pending = await call("POST", "/workflows", workflowBody(step(["sms"])));
  assert.equal(pending.status, 400);
  assert.equal(pending.body.message, "Template 'welcome' is not approved for fallback channel sms");
  assert.deepEqual(pending.body.details, {
    field: "steps.0.configuration.fallback_channels",
    code: "template_not_approved",
  });

  await deps.sql`delete from templates where team_id = ${team.id} and channel = 'email'`;
  const missing = await call("PATCH", `/workflows/${ok.body.id}`, step(["email"]));
  assert.equal(missing.status, 400);
  assert.equal(missing.body.message, "Template 'welcome' not found for fallback channel email");
  assert.equal((await call("GET", "/workflows")).body.total, 1);
});

dbTest("GET /workflows pages newest first with total, page, totalPages and limit (default 20)", async () => {
  const { call } = await workflowSetup();
  const ids: string[] = [];
  for (let i = 0; i < 23; i++) ids.push((await call("POST", "/workflows", workflowBody({ name: `wf ${i}` }))).body.id);
  const first = await call("GET", "/workflows");
  assert.equal(first.status, 200);
  assert.equal(first.body.total, 23);
  assert.equal(first.body.page, 1);
  assert.equal(first.body.limit, 20);
  assert.equal(first.body.totalPages, 2);
  assert.equal(first.body.workflows.length, 20);
  assert.equal(first.body.workflows[0].id, ids[22]);
  assert.equal(first.body.workflows[0].steps.length, 2);
  const second = await call("GET", "/workflows?page=2&limit=20");
  assert.deepEqual(second.body.workflows.map((w: { id: string }) => w.id), [ids[2], ids[1], ids[0]]);
  const small = await call("GET", "/workflows?limit=5&page=5");
  assert.deepEqual(small.body.workflows.map((w: { id: string }) => w.id), [ids[2], ids[1], ids[0]]);
  assert.equal(small.body.totalPages, 5);
  const beyond = await call("GET", "/workflows?page=9");
  assert.deepEqual(beyond.body.workflows, []);
  assert.equal(beyond.body.total, 23);
});

dbTest("GET /workflows filters by event_type, is_active and search over name and description", async () => {
  const { call } = await workflowSetup();
  const a = await call("POST", "/workflows", workflowBody({ name: "Cart recovery", event_type: "cart_abandoned" }));
  const b = await call(
    "POST",
    "/workflows",
    workflowBody({ name: "Onboarding", description: "Series for 100%_new users", is_active: false }),
  );
  const c = await call("POST", "/workflows", workflowBody({ name: "Win back", description: "Lapsed CART owners" }));
  const ids = async (query: string) =>
    (await call("GET", `/workflows${query}`)).body.workflows.map((w: { id: string }) => w.id).sort();
  assert.deepEqual(await ids("?event_type=cart_abandoned"), [a.body.id]);
  assert.deepEqual(await ids("?event_type=user_signup"), [b.body.id, c.body.id].sort());
  assert.deepEqual(await ids("?is_active=false"), [b.body.id]);
  assert.deepEqual(await ids("?is_active=true"), [a.body.id, c.body.id].sort());
  assert.deepEqual(await ids("?search=cart"), [a.body.id, c.body.id].sort());
  assert.deepEqual(await ids("?search=ONBOARD"), [b.body.id]);
  assert.deepEqual(await ids("?search=100%25_"), [b.body.id]);
  assert.deepEqual(await ids("?search=%25"), [b.body.id]);
  assert.deepEqual(await ids("?search=cart&is_active=true&event_type=user_signup"), [c.body.id]);
  const filtered = await call("GET", "/workflows?search=cart&limit=1");
  assert.equal(filtered.body.total, 2);
  assert.equal(filtered.body.totalPages, 2);
});

dbTest("GET /workflows answers 400 for invalid query parameters", async () => {
  const { call } = await workflowSetup();
  const cases: [string, string][] = [
    ["limit=0", "limit must not be less than 1"],
    ["limit=101", "limit must not be greater than 100"],
    ["page=0", "page must not be less than 1"],
    ["is_active=maybe", "is_active must be one of: true, false"],
  ];
  for (const [query, line] of cases) {
    const res = await call("GET", `/workflows?${query}`);
    assert.equal(res.status, 400, query);
    assert.deepEqual(res.body.message, [line], query);
  }
  // A value of the wrong type is 400 too (its line's wording is the shared validation's).
  for (const query of ["limit=ten", "page=x", "page=1.5"]) {
    const res = await call("GET", `/workflows?${query}`);
    assert.equal(res.status, 400, query);
    assert.match(res.body.message[0], new RegExp(`^${query.split("=")[0]} `));
  }
  const wrongType = await call("POST", "/workflows", workflowBody({ conditions: { tags: "vip" } }));
  assert.equal(wrongType.status, 400);
  assert.match(wrongType.body.message[0], /^conditions\.tags /);
});

dbTest("workflows of another team are invisible: 404 'Workflow not found'", async () => {
  const { call, deps } = await workflowSetup();
  const created = await call("POST", "/workflows", workflowBody());
  const other = await testTeam(deps);
  const headers = { "X-API-Key": other.keys.live };
  for (const [method, path] of [["GET", ""], ["PATCH", ""], ["DELETE", ""], ["GET", "/executions"]]) {
    const res = await call(
      method,
      `/workflows/${created.body.id}${path}`,
      method === "PATCH" ? {} : undefined,
      headers,
    );
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.deepEqual(res.body, {
      statusCode: 404,
      message: "Workflow not found",
      error: "Not Found",
      code: "workflow_not_found",
    });
  }
  assert.equal((await call("GET", "/workflows", undefined, headers)).body.total, 0);
});

dbTest("an unknown or malformed workflow id is 404 'Workflow not found'", async () => {
  const { call } = await workflowSetup();
  for (const id of [crypto.randomUUID(), "not-a-uuid"]) {
    for (const [method, path] of [["GET", ""], ["PATCH", ""], ["DELETE", ""], ["GET", "/executions"]]) {
      const res = await call(method, `/workflows/${id}${path}`, method === "PATCH" ? { name: "x" } : undefined);
      assert.equal(res.status, 404, `${method} ${id}${path}`);
      assert.equal(res.body.message, "Workflow not found");
    }
  }
});

dbTest("GET /workflows/:id answers the statistics view of a workflow that never ran", async () => {
  const { call } = await workflowSetup();
  const created = await call("POST", "/workflows", workflowBody());
  const res = await call("GET", `/workflows/${created.body.id}`);
  assert.equal(res.status, 200);
  const d = res.body;
  assert.equal(d.id, created.body.id);
  assert.equal(d.campaign_name, created.body.name);
  assert.equal(d.trigger_type, "event");
  assert.equal(d.trigger_source, "user_signup");
  assert.equal(d.status, "PENDING");
  assert.equal(d.created_at, created.body.created_at);
  assert.equal(d.started_at, null);
  assert.equal(d.completed_at, null);
  assert.equal(d.scheduled_at, null);
  assert.equal(d.duration_seconds, 0);
  assert.equal(d.workflow_executions_count, 0);
  assert.deepEqual(d.channels, {
    email: { execution_count: 0, total_contacts: 0, sent: 0, failed: 0, success_rate: 0 },
    sms: { execution_count: 0, total_contacts: 0, sent: 0, failed: 0, success_rate: 0, estimated_cost: 0 },
  });
  assert.deepEqual(d.totals, {
    total_contacts: 0,
    total_sent: 0,
    total_failed: 0,
    overall_success_rate: 0,
    total_cost: 0,
    currency: "USD",
  });
  assert.deepEqual(d.progress, { processed: 0, total: 0, percentage: 0 });
  assert.deepEqual(d.steps, created.body.steps);
});

dbTest("PATCH /workflows/:id changes only the fields given, and steps replace the steps", async () => {
  const { call } = await workflowSetup();
  const created = (await call("POST", "/workflows", workflowBody())).body;
  const renamed = await call("PATCH", `/workflows/${created.id}`, { name: "Renamed", is_active: false });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.name, "Renamed");
  assert.equal(renamed.body.is_active, false);
  assert.equal(renamed.body.description, created.description);
  assert.equal(renamed.body.event_type, created.event_type);
  assert.deepEqual(renamed.body.steps, created.steps);
  assert.ok(renamed.body.updated_at >= created.updated_at);
  const steps = [{
    step_order: 1,
    channel_type: "whatsapp",
    configuration: { template_id: "welcome", delay_minutes: 5 },
  }];
  const replaced = await call("PATCH", `/workflows/${created.id}`, {
    steps,
    conditions: { tags: ["vip"] },
    description: null,
  });
  assert.equal(replaced.status, 200);
  assert.equal(replaced.body.steps.length, 1);
  assert.equal(replaced.body.steps[0].channel_type, "whatsapp");
  assert.deepEqual(replaced.body.conditions, { tags: ["vip"] });
  assert.equal(replaced.body.description, "");
  assert.equal(replaced.body.name, "Renamed");
  const got = await call("GET", `/workflows/${created.id}`);
  assert.deepEqual(got.body.steps, replaced.body.steps);
  assert.deepEqual(Object.keys(got.body.channels), ["whatsapp"]);
});

dbTest("PATCH /workflows/:id validates like create", async () => {
  const { call } = await workflowSetup();
  const created = (await call("POST", "/workflows", workflowBody())).body;
  const bad = await call("PATCH", `/workflows/${created.id}`, { name: "", steps: [] });
  assert.equal(bad.status, 400);
  assert.ok(bad.body.message.includes("name should not be empty"));
  assert.ok(bad.body.message.includes("steps must contain at least 1 elements"));
  const missing = await call("PATCH", `/workflows/${created.id}`, {
    steps: [{ step_order: 1, channel_type: "sms", configuration: { template_id: "nope" } }],
  });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.message, "Template 'nope' not found for team");
  assert.deepEqual((await call("GET", `/workflows/${created.id}`)).body.steps, created.steps);
});

dbTest("DELETE /workflows/:id answers {deleted: true, id} and the workflow is gone", async () => {
  const { call } = await workflowSetup();
  const created = (await call("POST", "/workflows", workflowBody())).body;
  const res = await call("DELETE", `/workflows/${created.id}`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { deleted: true, id: created.id });
  assert.equal((await call("GET", `/workflows/${created.id}`)).status, 404);
  assert.equal((await call("DELETE", `/workflows/${created.id}`)).status, 404);
  assert.equal((await call("GET", "/workflows")).body.total, 0);
});

dbTest("GET /workflows/:id/executions pages an empty history", async () => {
  const { call } = await workflowSetup();
  const created = (await call("POST", "/workflows", workflowBody())).body;
  const res = await call("GET", `/workflows/${created.id}/executions`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { executions: [], total: 0, page: 1, totalPages: 0, limit: 20 });
  const bad = await call("GET", `/workflows/${created.id}/executions?limit=500`);
  assert.equal(bad.status, 400);
});

dbTest("workflow routes need a secret key: a publishable key is 403", async () => {
  const { call, keys } = await workflowSetup();
  const res = await call("GET", "/workflows", undefined, { "X-API-Key": keys.publishable });
  assert.equal(res.status, 403);
  assert.equal(res.body.message, "Insufficient permissions");
  const none = await call("GET", "/workflows", undefined, { "X-API-Key": "" });
  assert.equal(none.status, 401);
});

dbTest("a workflow id over 255 characters in a path is 400; up to 255 it is 404 'Workflow not found'", async () => {
  const { call } = await workflowSetup();
  for (const [method, path] of [["GET", ""], ["PATCH", ""], ["DELETE", ""], ["GET", "/executions"]]) {
    const body = method === "PATCH" ? { name: "x" } : undefined;
    const over = await call(method, `/workflows/${"w".repeat(MAX_ID_LENGTH + 1)}${path}`, body);
    assert.equal(over.status, 400, `${method} ${path}`);
    assert.deepEqual(over.body.message, [`id must be at most ${MAX_ID_LENGTH} characters`]);
    const at = await call(method, `/workflows/${"w".repeat(MAX_ID_LENGTH)}${path}`, body);
    assert.equal(at.status, 404, `${method} ${path}`);
    assert.equal(at.body.message, "Workflow not found");
  }
  const segment = await call("POST", "/workflows", workflowBody({ conditions: { segment_id: "s".repeat(201) } }));
  assert.equal(segment.status, 400);
  assert.deepEqual(segment.body.message, ["conditions.segment_id must be at most 200 characters"]);
});

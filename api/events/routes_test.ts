import assert from "node:assert/strict";
import { dbTest, jsonRequest, testTeam } from "../../shared/testing.ts";
import { workflowBody, workflowSetup } from "../workflows/testing.ts";

async function eventSetup() {
  const setup = await workflowSetup();
  const send = (body: unknown, headers: Record<string, string> = {}) =>
    setup.call("POST", "/events/send", body, { "X-Team-ID": setup.team.id, ...headers });
  return { ...setup, send };
}

const future = () => new Date(Date.now() + 3_600_000).toISOString();

dbTest("POST /events/send without X-Team-ID, or with another team's id, is 401 'Invalid team context'", async () => {
  const { send, deps, team } = await eventSetup();
  const other = await testTeam(deps);
  for (const headers of [{ "X-Team-ID": "" }, { "X-Team-ID": other.team.id }, { "X-Team-ID": "nonsense" }]) {
    const res = await send({ event_name: "user_signup" }, headers);
    assert.equal(res.status, 401, JSON.stringify(headers));
    assert.deepEqual(res.body, {
      statusCode: 401,
      message: "Invalid team context",
      error: "Unauthorized",
      code: "invalid_team_context",
      details: { field: "X-Team-ID", code: "invalid_value" },
      hint: `X-Team-ID must name the team of this API key: X-Team-ID: ${team.id}`,
    });
  }
  // The team check comes before the body is read.
  const bad = await send({}, { "X-Team-ID": "" });
  assert.equal(bad.status, 401);
  const ok = await send({}, { "X-Team-ID": team.id });
  assert.equal(ok.status, 400);
  // The team's id in capitals (a UUID is case-insensitive), with spaces around it, is the team.
  assert.equal((await send({}, { "X-Team-ID": ` ${team.id.toUpperCase()} ` })).status, 400);
});

dbTest("POST /events/send without event_name is 400 'Event name is required'", async () => {
  const { send } = await eventSetup();
  for (const body of [{}, { event_name: "" }, { event_name: "   " }, { event_name: null }, { event_name: 42 }]) {
    const res = await send(body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.message, "Event name is required");
    assert.equal(res.body.error, "Bad Request");
    assert.deepEqual(res.body.details, { field: "event_name", code: "required" });
  }
});

dbTest(
  "POST /events/send with a malformed trigger_at (under any alias) is 400 'Invalid trigger_at format'",
  async () => {
    const { send, call } = await eventSetup();
    await call("POST", "/workflows", workflowBody());
    const cases = [
      { trigger_at: "tomorrow" },
      { trigger_at: "2026-13-45T99:00:00Z" },
      { trigger_at: 1_800_000_000_000 },
      { triggerAt: "next week" },
      { scheduled_at: "21/11/2030" },
    ];
    for (const extra of cases) {
      const res = await send({ event_name: "user_signup", ...extra });
      assert.equal(res.status, 400, JSON.stringify(extra));
      assert.equal(res.body.message, "Invalid trigger_at format");
      assert.deepEqual(res.body.details, { field: "trigger_at", code: "invalid_format" });
    }
  },
);

dbTest("POST /events/send with trigger_at in the past is 400 'trigger_at must be a future date'", async () => {
  const { send, call } = await eventSetup();
  await call("POST", "/workflows", workflowBody());
  for (const at of ["2020-01-01T00:00:00Z", new Date(Date.now() - 1000).toISOString(), "2021-06-01"]) {
    const res = await send({ event_name: "user_signup", trigger_at: at });
    assert.equal(res.status, 400, at);
    assert.equal(res.body.message, "trigger_at must be a future date");
    assert.deepEqual(res.body.details, { field: "trigger_at", code: "invalid_value" });
  }
});

dbTest("POST /events/send for a name no workflow of the team listens to is 404 'Event type not found'", async () => {
  const { send, call, deps } = await eventSetup();
  const res = await send({ event_name: "user_signup" });
  assert.equal(res.status, 404);
  assert.deepEqual(res.body, {
    statusCode: 404,
    message: "Event type not found",
    error: "Not Found",
    code: "event_type_not_found",
  });
  // Another team's workflow does not configure the name for this team.
  const other = await testTeam(deps);
  await call("POST", "/workflows", workflowBody({ event_type: "order_paid" }), { "X-API-Key": other.keys.live });
  assert.equal((await send({ event_name: "order_paid" })).status, 404);
  // Names match exactly.
  await call("POST", "/workflows", workflowBody({ event_type: "order_paid" }));
  assert.equal((await send({ event_name: "Order_Paid" })).status, 404);
  // A deleted workflow's event type is no longer configured, also just after it was accepted (cached).
  const created = await call("POST", "/workflows", workflowBody({ event_type: "cart_abandoned" }));
  assert.equal((await send({ event_name: "cart_abandoned" })).status, 201);
  await call("DELETE", `/workflows/${created.body.id}`);
  assert.equal((await send({ event_name: "cart_abandoned" })).status, 404);
});

dbTest("POST /events/send checks the body before the event type, and the schedule before the name", async () => {
  const { send } = await eventSetup();
  const res = await send({ event_name: "unknown_event", trigger_at: "2020-01-01T00:00:00Z" });
  assert.equal(res.status, 400);
  assert.equal(res.body.message, "trigger_at must be a future date");
  const typed = await send({ event_name: "unknown_event", event_data: "not an object", trigger_at: future() });
  assert.equal(typed.status, 400);
  assert.match(typed.body.message[0], /^event_data /);
});

dbTest("POST /events/send is open to publishable keys (it reaches the event checks)", async () => {
  const { send, keys } = await eventSetup();
  const res = await send({ event_name: "user_signup" }, { "X-API-Key": keys.publishable });
  assert.equal(res.status, 404);
  assert.equal(res.body.message, "Event type not found");
});

dbTest(
  "a 401 for a missing X-Team-ID is not kept as the Idempotency-Key's answer: the retry with it runs",
  async () => {
    const { app, call, keys, team } = await eventSetup();
    await call("POST", "/workflows", workflowBody());
    const send = (teamId?: string) =>
      app.request(
        "/api/v1/events/send",
        jsonRequest("POST", { event_name: "user_signup" }, {
          "X-API-Key": keys.live,
          "Idempotency-Key": "signup-1",
          ...(teamId ? { "X-Team-ID": teamId } : {}),
        }),
      );
    assert.equal((await send()).status, 401);
    const retried = await send(team.id);
    assert.equal(retried.headers.get("idempotent-replayed"), null);
    assert.equal(retried.status, 201, await retried.clone().text());
    const replayed = await send(team.id);
    assert.equal(replayed.headers.get("idempotent-replayed"), "true");
    assert.equal(replayed.status, 201);
  },
);

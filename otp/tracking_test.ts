import assert from "node:assert/strict";
import { dbTest, randomEmail } from "../shared/testing.ts";
import { otpWorld, randomPhone, sandboxSend } from "./testing.ts";

dbTest("the trigger_id of each channel of an OTP send can be read, sandbox or sent", async () => {
  const world = await otpWorld();
  const get = async (path: string) => {
    const res = await world.app.request(`/api/v1${path}`, { headers: { "X-API-Key": world.keys.live } });
    return { status: res.status, body: await res.json() };
  };
  // Sent (live key): recorded in Postgres with its execution.
  const sent = await world.post("/send", {
    channels: ["email", "sms"],
    recipients: { email: randomEmail(), sms: randomPhone() },
  });
  assert.equal(sent.status, 200);
  const sentBody = await sent.json();
  for (const channel of ["email", "sms"]) {
    const { trigger_id, execution_id } = sentBody.channels_results[channel];
    const trigger = await get(`/triggers/${trigger_id}`);
    assert.equal(trigger.status, 200, JSON.stringify(trigger.body));
    assert.equal(trigger.body.status, "completed");
    assert.equal(trigger.body.trigger_type, channel);
    assert.deepEqual(trigger.body.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
    const path = channel === "email" ? "messages" : channel;
    const execution = await get(`/${path}/executions/${execution_id}`);
    assert.equal(execution.status, 200, JSON.stringify(execution.body));
  }
  // Sandbox: nothing sent, the triggers still answer.
  const sandbox = await world.post("/send", sandboxSend(["whatsapp"]));
  assert.equal(sandbox.status, 200);
  const { trigger_id, execution_id } = (await sandbox.json()).channels_results.whatsapp;
  const trigger = await get(`/triggers/${trigger_id}`);
  assert.equal(trigger.status, 200, JSON.stringify(trigger.body));
  assert.equal(trigger.body.status, "completed");
  assert.equal(trigger.body.trigger_type, "whatsapp");
  // Its execution, by its own id too, and the jobs path its trigger's details name.
  for (const id of [execution_id, trigger_id]) {
    const execution = await get(`/whatsapp/executions/${id}`);
    assert.equal(execution.status, 200, JSON.stringify(execution.body));
    assert.equal(execution.body.id, execution_id);
    assert.equal(execution.body.status, "completed");
  }
  const direct = await get(`/triggers/${trigger_id}/direct`);
  const jobs = await get(direct.body.executions[0].jobs_endpoint.replace("/api/v1", ""));
  assert.equal(jobs.status, 200, JSON.stringify(jobs.body));
  // Another team cannot read them.
  const other = await otpWorld();
  const foreign = await other.app.request(`/api/v1/triggers/${trigger_id}`, {
    headers: { "X-API-Key": other.keys.live },
  });
  assert.equal(foreign.status, 404);
  const foreignExecution = await other.app.request(`/api/v1/whatsapp/executions/${execution_id}`, {
    headers: { "X-API-Key": other.keys.live },
  });
  assert.equal(foreignExecution.status, 404);
});

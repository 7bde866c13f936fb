import assert from "node:assert/strict";
import { createService } from "../main.ts";
import { createContact } from "../shared/contacts/queries.ts";
import { toMicros } from "../shared/money.ts";
import { noProviderNote } from "../shared/providers/registry.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { dbTest, jsonRequest, testDeps, testTeam } from "../shared/testing.ts";
import { balanceMicros, topUp } from "../shared/wallet.ts";
import { startWorker } from "./queue.ts";

// The suite bills the outbox (BILL_OUTBOX) so that its sends check the wallet; here it is off, as in
// production. The worker is one per process and takes the deps it is first started with: this file's.
async function setup() {
  const deps = await testDeps({ BILL_OUTBOX: false });
  startWorker(deps);
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const call = async (method: string, path: string, body?: unknown, key = keys.live) => {
    const res = await app.request(path, jsonRequest(method, body, { "X-API-Key": key }));
    return { status: res.status, body: await res.json() };
  };
  const finished = async (triggerId: string) => {
    for (let i = 0; i < 2_000; i++) {
      const { body } = await call("GET", `/api/v1/triggers/${triggerId}`);
      if (body.status === "completed" || body.status === "failed") return body;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`Trigger ${triggerId} did not finish`);
  };
  return { deps, team, keys, call, finished };
}

dbTest(
  "a live SMS with no provider goes to the outbox uncharged, and every answer says so and what was missing",
  async () => {
    const { deps, team, keys, call, finished } = await setup();
    await upsertTemplate(deps.sql, team.id, "sms", "code", { body: "Hi {{contact_first_name}}, code {{code}}" });
    // An empty wallet: nothing is charged, so nothing is asked of it.
    const send = { template_key: "code", recipient_type: "direct_sms", direct_phone: "+14155550123" };
    const accepted = await call("POST", "/api/v1/sms/send", send);
    assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
    assert.deepEqual(accepted.body.warnings, [
      "sms: Template variables with no value render empty: contact_first_name, code",
      noProviderNote("sms"),
    ]);
    const trigger = await finished(accepted.body.trigger_id);
    assert.equal(trigger.summary.sent, 1);
    assert.deepEqual(trigger.missing_variables, ["code", "contact_first_name"]);
    assert.deepEqual(trigger.warnings, [
      "Template variables with no value render empty: code, contact_first_name (1 message)",
      `${noProviderNote("sms")} (1 message)`,
    ]);
    const jobs = await call("GET", `/api/v1/sms/executions/${accepted.body.trigger_id}/jobs`);
    assert.equal(jobs.status, 200);
    const [job] = jobs.body.jobs;
    assert.equal(job.status, "sent");
    assert.equal(job.cost, 0);
    assert.equal(job.note, noProviderNote("sms"));
    assert.deepEqual(job.missing_variables, ["contact_first_name", "code"]);
    assert.equal(await balanceMicros(deps.sql, team.id), 0);
    // Given its variables, from a funded wallet: no warning about them, and still nothing charged.
    await topUp(deps.sql, team.id, toMicros(1));
    const full = await call("POST", "/api/v1/sms/send", { ...send, direct_first_name: "Ann", variables: { code: 7 } });
    assert.deepEqual(full.body.warnings, [noProviderNote("sms")]);
    const fullTrigger = await finished(full.body.trigger_id);
    assert.equal(fullTrigger.missing_variables, undefined);
    assert.equal(await balanceMicros(deps.sql, team.id), toMicros(1));
    // A test key always uses the outbox: that is no news, and its job carries no note.
    const sandbox = await call("POST", "/api/v1/sms/send", { ...send, variables: { code: 7 } }, keys.test);
    assert.deepEqual(sandbox.body.warnings, ["sms: Template variables with no value render empty: contact_first_name"]);
    await finished(sandbox.body.trigger_id);
    const sandboxJobs = await call(
      "GET",
      `/api/v1/sms/executions/${sandbox.body.trigger_id}/jobs`,
      undefined,
      keys.test,
    );
    assert.equal(sandboxJobs.body.jobs[0].note, null);
  },
);

dbTest("a fan-out records on each message the variables its contact could not fill", async () => {
  const { deps, team, call, finished } = await setup();
  await upsertTemplate(deps.sql, team.id, "email", "hello", {
    subject: "Hello",
    html: "<p>Hi {{contact_first_name}}</p>",
  });
  const tag = `t${crypto.randomUUID().slice(0, 8)}`;
  await createContact(deps.sql, team.id, { email: `named.${tag}@example.com`, first_name: "Ann", tags: [tag] });
  const nameless = await createContact(deps.sql, team.id, { email: `nameless.${tag}@example.com`, tags: [tag] });
  const accepted = await call("POST", "/api/v1/messages/send", {
    recipient_type: "tag",
    tag: [tag],
    template_key: "hello",
  });
  assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
  // At accept time a contact may have a first name: only the channel's missing provider is known.
  assert.deepEqual(accepted.body.warnings, [noProviderNote("email")]);
  const trigger = await finished(accepted.body.trigger_id);
  assert.equal(trigger.summary.sent, 2);
  assert.deepEqual(trigger.missing_variables, ["contact_first_name"]);
  assert.equal(trigger.warnings[0], "Template variables with no value render empty: contact_first_name (1 message)");
  const jobs = await call("GET", `/api/v1/messages/executions/${accepted.body.trigger_id}/jobs`);
  const byContact = Object.fromEntries(
    jobs.body.jobs.map((j: { contact_id: string; missing_variables: string[] }) => [j.contact_id, j.missing_variables]),
  );
  assert.deepEqual(byContact[nameless.id], ["contact_first_name"]);
  assert.equal(Object.values(byContact).filter((m) => (m as string[]).length === 0).length, 1);
});

dbTest(
  "the multi-channel trigger warns per channel, and an empty wallet does not stop it without providers",
  async () => {
    const { deps, team, call, finished } = await setup();
    await upsertTemplate(deps.sql, team.id, "email", "order", { subject: "Order {{order}}", html: "<p>{{order}}</p>" });
    await upsertTemplate(deps.sql, team.id, "sms", "order", { body: "Order {{order}} for {{contact_first_name}}" });
    const contact = await createContact(deps.sql, team.id, {
      email: `buyer.${crypto.randomUUID().slice(0, 8)}@example.com`,
      first_name: "Ann",
      custom_fields: { phone: "+14155550124" },
    });
    const res = await call("POST", "/api/v1/messages/trigger", {
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      channels: ["email", "sms"],
      template_key: "order",
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.warnings, [
      "email: Template variables with no value render empty: order",
      noProviderNote("email"),
      "sms: Template variables with no value render empty: order",
      noProviderNote("sms"),
    ]);
    const trigger = await finished(res.body.trigger_id);
    assert.equal(trigger.summary.sent, 2);
    assert.deepEqual(trigger.missing_variables, ["order"]);
    assert.equal(await balanceMicros(deps.sql, team.id), 0);
  },
);

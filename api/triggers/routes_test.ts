import assert from "node:assert/strict";
import { MAX_ID_LENGTH } from "../../shared/http/schemas.ts";
import { newSendSpec } from "../../shared/sending/accept.ts";
import { newUuidV7 } from "../../shared/sending/ids.ts";
import { testSendSpec } from "../../shared/sending/testing.ts";
import { pendingEntryOf } from "../../shared/sending/trigger_record.ts";
import { dbTest } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

async function sendEmail(f: Awaited<ReturnType<typeof sendingFixture>>) {
  const res = await f.post("/api/v1/messages/send", {
    recipient_type: "direct_email",
    direct_email: "t@example.com",
    subject: "S",
    content: "C",
  });
  return (await res.json()).trigger_id as string;
}

dbTest("GET /triggers/{id} shows the trigger of the specification", async () => {
  const f = await sendingFixture();
  const id = await sendEmail(f);
  const done = await f.waitForTrigger(id);
  assert.deepEqual(Object.keys(done).sort(), [
    "channels",
    "completed_at",
    "created_at",
    "details_endpoint",
    "flow_type",
    "id",
    "scheduled_for",
    "started_at",
    "status",
    "summary",
    "trigger_id",
    "trigger_type",
  ]);
  assert.equal(done.id, id);
  assert.equal(done.flow_type, "direct_channel");
  assert.equal(done.trigger_type, "email");
  assert.equal(done.status, "completed");
  assert.equal(done.details_endpoint, `/api/v1/triggers/${id}/direct`);
  assert.match(done.created_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(done.completed_at);
  assert.deepEqual(done.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
});

dbTest("GET /triggers/{id} answers from Postgres once the live record of a fan-out is gone", async () => {
  const f = await sendingFixture();
  await f.contact({ tags: ["t"] });
  const res = await f.post("/api/v1/messages/send", { recipient_type: "tag", tag: "t", subject: "S", content: "C" });
  const { trigger_id: id } = await res.json();
  const live = await f.waitForTrigger(id);
  // The live record goes (emptied, as the worker empties a record it no longer needs).
  const records = f.deps.records("send_triggers");
  const record = await records.get("", id);
  assert.ok(record?.value);
  await records.put("", id, null, { expected: record.version, ttlMs: 60_000, activeUntil: null });
  const stored = await (await f.get(`/api/v1/triggers/${id}`)).json();
  assert.deepEqual(stored, live);
  const direct = await (await f.get(`/api/v1/triggers/${id}/direct`)).json();
  assert.equal(direct.channel, "email");
  assert.equal(direct.executions[0].execution.sent_count, 1);
  assert.equal(
    direct.executions[0].jobs_endpoint,
    `/api/v1/messages/executions/${direct.executions[0].execution.id}/jobs`,
  );
});

dbTest("GET /triggers/{id} is 404 for an unknown id and for another team's trigger", async () => {
  const f = await sendingFixture();
  const other = await sendingFixture();
  const id = await sendEmail(other);
  for (const path of [`/api/v1/triggers/${id}`, `/api/v1/triggers/${crypto.randomUUID()}`, "/api/v1/triggers/nope"]) {
    const res = await f.get(path);
    assert.equal(res.status, 404);
    assert.equal((await res.json()).message, "Trigger not found");
  }
  assert.equal((await f.get(`/api/v1/triggers/${id}/direct`)).status, 404);
  await other.waitForTrigger(id);
});

dbTest("GET /triggers/{id} shows a trigger whose job the queue gave up on as failed", async () => {
  const f = await sendingFixture();
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const { trigger_id } = await (await f.post("/api/v1/messages/send", {
    recipient_type: "direct_email",
    direct_email: "t@example.com",
    subject: "S",
    content: "C",
    trigger_at: at,
  })).json();
  await f.deps.sendState.markGivenUp(trigger_id, "job-1");
  const res = await (await f.get(`/api/v1/triggers/${trigger_id}`)).json();
  assert.equal(res.status, "failed");
  // Its execution cannot finish either: every view of it says failed, not pending.
  const direct = await (await f.get(`/api/v1/triggers/${trigger_id}/direct`)).json();
  assert.deepEqual(direct.executions.map((e: { execution: { status: string } }) => e.execution.status), ["failed"]);
  const executionId = direct.executions[0].execution.id;
  for (const id of [executionId, trigger_id]) {
    const execution = await (await f.get(`/api/v1/messages/executions/${id}`)).json();
    assert.equal(execution.status, "failed", JSON.stringify(execution));
  }
});

dbTest("GET /triggers/{id} answers pending for a send the worker has not taken up yet", async () => {
  const f = await sendingFixture();
  const id = newUuidV7();
  const entry = pendingEntryOf(testSendSpec(f.team.id, { trigger_id: id }));
  await f.deps.sendState.acceptAtomically((unit) => f.deps.sendState.recordAccepted([entry], unit), 1);
  const res = await (await f.get(`/api/v1/triggers/${id}`)).json();
  assert.equal(res.status, "pending");
  assert.equal(res.trigger_type, "sms");
  assert.deepEqual(res.summary, { total_contacts: 0, sent: 0, failed: 0, filtered: 0 });
  // An id in capitals names the same trigger, as it does once the trigger is in Postgres.
  const upper = await (await f.get(`/api/v1/triggers/${id.toUpperCase()}`)).json();
  assert.deepEqual([upper.id, upper.status], [id, "pending"]);
  const other = await sendingFixture();
  assert.equal((await other.get(`/api/v1/triggers/${id}`)).status, 404);
});

dbTest("an execution of a send the worker has not taken up yet is found by its id, pending", async () => {
  const f = await sendingFixture();
  const spec = newSendSpec({
    team_id: f.team.id,
    sandbox: true,
    trigger_type: "multi_channel",
    body: { recipient_type: "direct" },
    recipient: { type: "direct", address: "+14155550123" },
    contents: [
      { channel: "email", template_key: "t", category: "transactional" },
      { channel: "sms", template_key: "t", category: "transactional" },
    ],
    now: Date.now(),
    at: undefined,
  });
  // Recorded as the acceptor records it (no job: the shared runtime's workers would deliver it).
  await f.deps.sendState.acceptAtomically((unit) => f.deps.sendState.recordAccepted([pendingEntryOf(spec)], unit), 1);
  const direct = await (await f.get(`/api/v1/triggers/${spec.trigger_id}/direct`)).json();
  for (const { id, content: { channel } } of spec.executions) {
    const listed = direct.executions.find((e: { channel: string }) => e.channel === channel);
    assert.equal(listed.execution.id, id);
    const base = channel === "email" ? "/api/v1/messages" : `/api/v1/${channel}`;
    const view = await f.get(`${base}/executions/${id}`);
    assert.equal(view.status, 200, channel);
    const execution = await view.json();
    assert.deepEqual([execution.id, execution.trigger_id, execution.channel, execution.status], [
      id,
      spec.trigger_id,
      channel,
      "pending",
    ]);
    const jobs = await f.get(listed.jobs_endpoint);
    assert.equal(jobs.status, 200, listed.jobs_endpoint);
    assert.deepEqual((await jobs.json()).jobs, []);
  }
  // Not on another channel's view, nor for another team.
  const email = spec.executions[0].id;
  assert.equal((await f.get(`/api/v1/sms/executions/${email}`)).status, 404);
  const other = await sendingFixture();
  assert.equal((await other.get(`/api/v1/messages/executions/${email}`)).status, 404);
});

dbTest("a trigger or execution id over 255 characters in a path is 400; up to 255 it is 404", async () => {
  const f = await sendingFixture();
  const paths = [
    ["/api/v1/triggers/{id}", "trigger_id", "Trigger not found"],
    ["/api/v1/triggers/{id}/direct", "trigger_id", "Trigger not found"],
    ["/api/v1/triggers/{id}/workflow", "trigger_id", "Trigger not found"],
    ["/api/v1/sms/executions/{id}", "id", "Execution not found"],
    ["/api/v1/messages/executions/{id}", "id", "Execution not found"],
    ["/api/v1/messages/executions/{id}/jobs", "execution_id", "Execution not found"],
  ];
  for (const [path, field, notFound] of paths) {
    const over = await f.get(path.replace("{id}", "t".repeat(MAX_ID_LENGTH + 1)));
    assert.equal(over.status, 400, path);
    assert.deepEqual((await over.json()).message, [`${field} must be at most ${MAX_ID_LENGTH} characters`]);
    const at = await f.get(path.replace("{id}", "t".repeat(MAX_ID_LENGTH)));
    assert.equal(at.status, 404, path);
    assert.equal((await at.json()).message, notFound);
  }
});

dbTest("each channel's execution list and views: default paging, bad paging refused, no other team's", async () => {
  const f = await sendingFixture();
  const other = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", { body: "Hi" });
  await f.template("whatsapp", "hi", { body: "Hi {{1}}", category: "UTILITY" });
  const sends = [
    {
      list: "/api/v1/messages",
      base: "/api/v1/messages",
      send: ["/api/v1/messages/send", { recipient_type: "direct_email", direct_email: "a@example.com", subject: "S" }],
    },
    {
      list: "/api/v1/sms/executions",
      base: "/api/v1/sms",
      send: ["/api/v1/sms/send", { template_key: "hi", recipient_type: "direct_sms", direct_phone: "+14155550123" }],
    },
    {
      list: "/api/v1/whatsapp/executions",
      base: "/api/v1/whatsapp",
      send: ["/api/v1/whatsapp/send", {
        template_key: "hi",
        recipient_type: "direct_whatsapp",
        direct_whatsapp: "+447700900001",
        conversation_category: "UTILITY",
      }],
    },
  ] as const;
  for (const { list, base, send: [path, body] } of sends) {
    const { trigger_id } = await f.finished(await f.post(path, { content: "C", ...body }));
    const page = await (await f.get(list)).json();
    assert.deepEqual([page.page, page.limit, page.total, page.totalPages], [1, 20, 1, 1], list);
    const [execution] = page.executions;
    assert.deepEqual([execution.trigger_id, execution.status, execution.sent_count], [trigger_id, "completed", 1]);
    assert.deepEqual(page.data, page.executions, `${list} carries its list as data too`);
    const view = await f.get(`${base}/executions/${execution.id}`);
    assert.equal(view.status, 200, base);
    const jobs = await (await f.get(`${base}/executions/${execution.id}/jobs`)).json();
    assert.deepEqual([jobs.page, jobs.limit, jobs.total, jobs.jobs.length], [1, 20, 1, 1], base);
    for (const query of ["page=0", "page=abc", "page=1.5", "limit=0", "limit=101", "limit=x"]) {
      for (const url of [`${list}?${query}`, `${base}/executions/${execution.id}/jobs?${query}`]) {
        const res = await f.get(url);
        assert.equal(res.status, 400, url);
        assert.equal((await res.json()).statusCode, 400, url);
      }
    }
    // Another team sees none of it, by either id, in its list or on the jobs path.
    const others = await (await other.get(list)).json();
    assert.deepEqual([others.executions, others.data], [[], []], list);
    for (const id of [execution.id, trigger_id]) {
      assert.equal((await other.get(`${base}/executions/${id}`)).status, 404, `${base} ${id}`);
      assert.equal((await other.get(`${base}/executions/${id}/jobs`)).status, 404, `${base} ${id} jobs`);
    }
  }
});

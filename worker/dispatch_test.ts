import assert from "node:assert/strict";
import { asJson } from "../shared/db.ts";
import { insertTriggers } from "../shared/sending/records.ts";
import { testSendSpec } from "../shared/sending/testing.ts";
import { newTriggerRecord } from "../shared/sending/trigger_record.ts";
import type { Deps } from "../shared/deps.ts";
import { dbTest, testConfig, testDeps, testTeam } from "../shared/testing.ts";
import type { DispatchState } from "./complete.ts";
import { createWorkerContext } from "./context.ts";
import type { DeliverBatchJob, DispatchJob } from "./jobs.ts";
import { runJob } from "./queue.ts";
import { pageSize } from "./recipients.ts";
import { depsOnKv } from "./sms_testing.ts";

Deno.test("a fan-out page holds 2,000 contacts on the embedded Postgres, 1,000 on a server, or FANOUT_PAGE_SIZE", () => {
  const config = testConfig({ FANOUT_PAGE_SIZE: 0 });
  assert.equal(pageSize({ ...config, DATABASE_URL: undefined }), 2_000);
  assert.equal(pageSize({ ...config, DATABASE_URL: "postgres://db/app" }), 1_000);
  assert.equal(pageSize({ ...config, FANOUT_PAGE_SIZE: 500 }), 500);
});

dbTest("dispatch pages a fan-out into batches of FANOUT_PAGE_SIZE, once, and they complete the trigger", async () => {
  const shared = await testDeps({ FANOUT_PAGE_SIZE: 500 });
  const kv = await Deno.openKv(":memory:");
  const jobs: DeliverBatchJob[] = [];
  kv.listenQueue((m) => {
    jobs.push(m as DeliverBatchJob);
  });
  const deps = depsOnKv(shared, kv);
  const w = createWorkerContext(deps);
  const { team } = await testTeam(deps);
  await insertContacts(deps, team.id, 1_234);
  const spec = testSendSpec(team.id, {
    trigger_type: "email",
    recipient_type: "tag",
    recipient: { type: "tag", tags: ["all"] },
    executions: [{
      id: crypto.randomUUID(),
      content: { channel: "email", subject: "S", html: "H", category: "transactional" },
    }],
  });
  const executionId = spec.executions[0].id;
  await insertTriggers(deps.sql, [spec], "processing", Date.now());
  const state = freshState(team.id);
  await deps.atomically(async (unit) => {
    await deps.sendState.putTrigger(newTriggerRecord(spec), unit);
    await deps.sendState.putDispatch(executionId, state, null, unit);
  });
  const dispatch: DispatchJob = { type: "dispatch", id: "d1", trigger_id: spec.trigger_id, execution_id: executionId };
  await runJob(w, dispatch);
  await runJob(w, dispatch);
  for (let i = 0; i < 100 && jobs.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(jobs.length, 3);
  assert.deepEqual(jobs.map((j) => j.batch_no).sort(), [0, 1, 2]);
  const after = (await deps.sendState.dispatch<DispatchState>(executionId))!.value;
  assert.equal(after.done, true);
  assert.equal(after.batches, 3);

  for (const job of jobs) await runJob(w, job);
  await runJob(w, jobs[1]);
  const record = (await deps.sendState.trigger(spec.trigger_id))!.record;
  assert.equal(record.status, "completed");
  assert.deepEqual(record.executions[0].counts, { total_contacts: 1_234, sent: 1_234, failed: 0, filtered: 0 });
  const [row] = await deps.sql`select status, total_contacts, sent from triggers where id = ${spec.trigger_id}`;
  assert.deepEqual({ ...row }, { status: "completed", total_contacts: 1_234, sent: 1_234 });
  const [{ n }] = await deps.sql`select count(*)::int as n from outbox_all where trigger_id = ${spec.trigger_id}`;
  assert.equal(n, 1_234);
  kv.close();
});

/** The dispatch state of a fan-out to the team's contacts tagged "all", not started yet. */
function freshState(teamId: string, extra: Partial<DispatchState> = {}): DispatchState {
  return { team_id: teamId, filter: { tags_all: ["all"] }, after: null, batches: 0, done: false, ...extra };
}

/** `n` contacts of the team, all tagged "all" (the even ones "even" too), inserted in pages. */
async function insertContacts(deps: Deps, teamId: string, n: number): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) => ({
    team_id: teamId,
    external_id: `d-${i}`,
    email: `d${i}.${crypto.randomUUID().slice(0, 6)}@example.com`,
    tags: i % 2 === 0 ? ["even", "all"] : ["all"],
    custom_fields: asJson({}),
  }));
  for (let i = 0; i < rows.length; i += 500) await deps.sql`insert into contacts ${deps.sql(rows.slice(i, i + 500))}`;
}

dbTest("promotional push fan-outs of a team share its rate: their batches come due one spacing apart", async () => {
  // 5,000 contacts a second: a batch of 500 every 100 ms, across both sends.
  const shared = await testDeps({ PUSH_PROMOTIONAL_RATE: 5_000, FANOUT_PAGE_SIZE: 500 });
  const kv = await Deno.openKv(":memory:");
  const arrivals: { job: DeliverBatchJob; at: number }[] = [];
  kv.listenQueue((m) => {
    arrivals.push({ job: m as DeliverBatchJob, at: Date.now() });
  });
  const deps = depsOnKv(shared, kv);
  const w = createWorkerContext(deps);
  const { team } = await testTeam(deps);
  await insertContacts(deps, team.id, 1_234);
  const state = freshState(team.id, { paced: true });
  const dispatches = ["a", "b"].map((id): DispatchJob => ({
    type: "dispatch",
    id,
    trigger_id: crypto.randomUUID(),
    execution_id: crypto.randomUUID(),
  }));
  for (const d of dispatches) {
    await deps.atomically((unit) => deps.sendState.putDispatch(d.execution_id, state, null, unit));
  }
  const started = Date.now();
  await Promise.all(dispatches.map((d) => runJob(w, d)));
  for (let i = 0; i < 300 && arrivals.length < 6; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(arrivals.length, 6);
  for (const d of dispatches) {
    const own = arrivals.filter((a) => a.job.execution_id === d.execution_id).map((a) => a.job.batch_no);
    assert.deepEqual(own, [0, 1, 2]);
  }
  // The k-th batch of the team comes due no earlier than k spacings after the first was booked.
  arrivals.forEach((a, k) =>
    assert.ok(a.at - started >= k * 100 - 2, `batch ${k} came due after ${a.at - started} ms`)
  );
  assert.ok((await deps.sendState.pushPace(team.id))?.value);
  kv.close();
});

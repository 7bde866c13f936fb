import assert from "node:assert/strict";
import { createService } from "../main.ts";
import { createContact } from "../shared/contacts/queries.ts";
import type { Deps } from "../shared/deps.ts";
import { PgBossQueue } from "../shared/engine/pg_boss_queue.ts";
import { serverTest, testQueueOptions } from "../shared/engine/pg_boss_testing.ts";
import { postgresHotState } from "../shared/engine/postgres/hot_state.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { jsonRequest, testDeps, testTeam } from "../shared/testing.ts";
import { enqueueEvents, newEvent } from "../shared/webhook_events.ts";
import type { WorkflowStartsJob } from "../shared/workflows/jobs.ts";
import { startWorker } from "./queue.ts";

/**
 * Deps on the Postgres engine: the test runtime's database, its hot state in Postgres, and a
 * pg-boss queue of a schema of its own (so no other test's jobs reach this worker), with the worker
 * started on it. `enqueued` lists the types of the jobs enqueued, whoever enqueued them.
 */
async function postgresEngine(overrides: Parameters<typeof testDeps>[0] = {}) {
  const base = await testDeps(overrides);
  const hot = postgresHotState(base.sql);
  const schema = `pgboss_worker_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const boss = await PgBossQueue.start<{ type: string }>(base.sql, testQueueOptions(schema, "jobs"));
  const enqueued: string[] = [];
  const queue: Deps["queue"] = {
    enqueue: (job, options, unit) => (enqueued.push(job.type), boss.enqueue(job, options, unit)),
    listen: (handler) => boss.listen(handler),
    stop: () => boss.stop(),
  };
  const deps: Deps = {
    ...base,
    queue,
    atomically: hot.atomically,
    records: hot.records,
    counter: hot.counters,
    idempotency: hot.idempotency,
    otpSessions: hot.otpSessions,
  };
  const worker = startWorker(deps);
  return {
    deps,
    enqueued,
    async close() {
      worker.stop();
      await boss.stop();
      await hot.close();
    },
  };
}

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Cannot see ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

serverTest(
  "a worker on pg-boss delivers a webhook, and its retry after a failed attempt, through the queue",
  async () => {
    // The first wait after a failure: 30 s × 0.01 = 300–375 ms.
    const pg = await postgresEngine({ WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_RETRY_SCALE: 0.01 });
    const statuses = [500, 204];
    const received: string[] = [];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      await req.body?.cancel();
      received.push(req.headers.get("webhook-id") ?? "");
      return new Response(null, { status: statuses[Math.min(received.length, statuses.length) - 1] });
    });
    try {
      const app = createService(pg.deps);
      const { team, keys } = await testTeam(pg.deps);
      const url = `http://127.0.0.1:${server.addr.port}/hooks`;
      const hook = await app.request("/api/v1/webhooks", jsonRequest("POST", { url }, { "X-API-Key": keys.live }));
      assert.equal(hook.status, 201);
      const { id: endpointId } = await hook.json();

      const [event] = await enqueueEvents(pg.deps, team.id, [
        newEvent("message.sent", { message_id: "m1" }, Date.now()),
      ]);
      const attempts = () =>
        pg.deps.sql<{ attempt: number; status: string }[]>`
          select attempt, status from webhook_attempts where endpoint_id = ${endpointId} order by attempt`;
      // An attempt is recorded once its answer is in.
      await until(async () => (await attempts()).length >= 2, "the retry recorded");
      assert.deepEqual((await attempts()).map((a) => [a.attempt, a.status]), [[1, "failed"], [2, "succeeded"]]);
      assert.deepEqual(received, [event.id, event.id]);
      assert.deepEqual(pg.enqueued, ["webhook-deliver", "webhook-deliver"], "the first attempt and its retry");
    } finally {
      await server.shutdown();
      await pg.close();
    }
  },
);

serverTest("a worker on pg-boss starts a workflow and runs its step job through the queue", async () => {
  const pg = await postgresEngine();
  try {
    const app = createService(pg.deps);
    const { team, keys } = await testTeam(pg.deps);
    await upsertTemplate(pg.deps.sql, team.id, "email", "hello", { subject: "Hi", html: "<p>hi</p>" });
    const created = await app.request(
      "/api/v1/workflows",
      jsonRequest("POST", {
        name: "pg-boss",
        event_type: "pg_boss",
        steps: [{ step_order: 1, channel_type: "email", configuration: { template_id: "hello", delay_minutes: 0 } }],
      }, { "X-API-Key": keys.live }),
    );
    assert.equal(created.status, 201);
    const workflow: { id: string } = await created.json();
    const email = `pg.${crypto.randomUUID().slice(0, 8)}@example.com`;
    const contact = await createContact(pg.deps.sql, team.id, { email });
    const triggerId = crypto.randomUUID();
    const job: WorkflowStartsJob = {
      type: "workflow-starts",
      id: crypto.randomUUID(),
      starts: [{
        trigger_id: triggerId,
        job_id: crypto.randomUUID(),
        team_id: team.id,
        sandbox: true,
        source: "api",
        workflow_id: workflow.id,
        recipient: { type: "contact", contact_id: contact.id, external_id: contact.external_id },
        execution_id: crypto.randomUUID(),
        variables: {},
        channel_variables: {},
        steps_override: {},
        metadata: {},
        created_at: Date.now(),
        scheduled_for: null,
      }],
    };

    await pg.deps.queue.enqueue(job);
    const outbox = () =>
      pg.deps.sql<{ to_address: string }[]>`
      select to_address from outbox_all where trigger_id = ${triggerId}`;
    await until(async () => (await outbox()).length > 0, "the step's email");
    assert.deepEqual((await outbox()).map((m) => m.to_address), [email]);
    assert.ok(pg.enqueued.includes("workflow-step"), `enqueued: ${pg.enqueued.join(", ")}`);
    const executions = () =>
      pg.deps.sql<{ status: string }[]>`select status from workflow_executions where trigger_id = ${triggerId}`;
    // The execution finishes once its step's messages are recorded.
    await until(async () => (await executions())[0]?.status === "COMPLETED", "the execution completed");
  } finally {
    await pg.close();
  }
});

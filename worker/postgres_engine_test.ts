import assert from "node:assert/strict";
import { findTrigger } from "../api/triggers/tracking.ts";
import { asJson } from "../shared/db.ts";
import type { Deps } from "../shared/deps.ts";
import { PgBossQueue } from "../shared/engine/pg_boss_queue.ts";
import { serverTest, testQueueOptions } from "../shared/engine/pg_boss_testing.ts";
import { postgresHotState } from "../shared/engine/postgres/hot_state.ts";
import { sendAcceptor } from "../shared/sending/acceptor.ts";
import { sendKeys } from "../shared/sending/keys.ts";
import { testSendSpec } from "../shared/sending/testing.ts";
import { testDeps, testTeam } from "../shared/testing.ts";
import { createWorkerContext } from "./context.ts";
import type { Job } from "./jobs.ts";
import { runJob } from "./queue.ts";

/** Deps whose hot state and queue are Postgres's (migration 015 and 019, pg-boss in a schema of its own). */
async function postgresDeps(): Promise<{ deps: Deps; close(): Promise<void> }> {
  const shared = await testDeps({ FANOUT_PAGE_SIZE: 200 });
  const hot = postgresHotState(shared.sql);
  const schema = `pgboss_e3_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const queue = await PgBossQueue.start<{ type: string }>(shared.sql, testQueueOptions(schema, "jobs"));
  const deps: Deps = { ...shared, sendState: hot.sendState, atomically: hot.atomically, queue };
  return {
    deps,
    async close() {
      await queue.stop();
      await hot.close();
    },
  };
}

serverTest("ENGINE=postgres: a fan-out is accepted, dispatched, counted and completed with no KV write", async () => {
  const { deps, close } = await postgresDeps();
  try {
    const w = createWorkerContext(deps);
    await deps.queue.listen((job) => runJob(w, job as Job));
    const { team } = await testTeam(deps);
    const rows = Array.from({ length: 450 }, (_, i) => ({
      team_id: team.id,
      external_id: `pg-${i}`,
      email: `pg${i}.${crypto.randomUUID().slice(0, 6)}@example.com`,
      tags: ["pg"],
      custom_fields: asJson({}),
    }));
    await deps.sql`insert into contacts ${deps.sql(rows)}`;
    const spec = testSendSpec(team.id, {
      trigger_type: "email",
      recipient_type: "tag",
      recipient: { type: "tag", tags: ["pg"] },
      executions: [{
        id: crypto.randomUUID(),
        content: { channel: "email", subject: "S", html: "H", category: "transactional" },
      }],
    });
    await sendAcceptor(deps).accept(spec, Date.now());
    // Pending at once, from the record written with the accept.
    assert.ok((await findTrigger(deps, team.id, spec.trigger_id))?.status);

    let view = await findTrigger(deps, team.id, spec.trigger_id);
    for (let i = 0; i < 600 && view?.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      view = await findTrigger(deps, team.id, spec.trigger_id);
    }
    assert.equal(view?.status, "completed");
    assert.deepEqual(view?.summary, { total_contacts: 450, sent: 450, failed: 0, filtered: 0 });
    // Three batches of 200, 200 and 50, each counted once.
    assert.deepEqual((await deps.sendState.counts(spec.trigger_id)).get(spec.executions[0].id)?.batches, 3);
    const [{ n }] = await deps.sql`select count(*)::int as n from outbox_all where trigger_id = ${spec.trigger_id}`;
    assert.equal(n, 450, "delivered once each");
    assert.equal((await deps.kv.get(sendKeys.trigger(spec.trigger_id))).versionstamp, null, "nothing in Deno KV");
    assert.equal((await deps.kv.get(sendKeys.dispatch(spec.executions[0].id))).versionstamp, null);
  } finally {
    await close();
  }
});

import assert from "node:assert/strict";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import { recordFinished } from "./records.ts";
import type { SendSpec } from "./spec.ts";
import { testSendSpec } from "./testing.ts";
import { finishExecutions, newTriggerRecord, zeroCounts } from "./trigger_record.ts";

function finished(spec: SendSpec) {
  const counts = new Map(spec.executions.map((e) => [e.id, { ...zeroCounts(), total_contacts: 1, sent: 1 }]));
  return finishExecutions({ ...newTriggerRecord(spec), started_at: Date.now() }, counts, Date.now());
}

dbTest("recordFinished() writes triggers and their executions together, or neither", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const ok = testSendSpec(team.id);
  await recordFinished(deps.sql, [ok], [finished(ok)]);
  const [trigger] = await deps.sql`select status from triggers where id = ${ok.trigger_id}`;
  assert.equal(trigger.status, "completed");
  const [{ n }] = await deps.sql`select count(*)::int as n from executions where trigger_id = ${ok.trigger_id}`;
  assert.equal(n, 1);

  // An execution Postgres refuses (its channel fails the check): the trigger is not left completed alone.
  const bad = testSendSpec(team.id, {
    executions: [{
      id: crypto.randomUUID(),
      content: {
        channel: "fax",
        template_key: "t",
        category: "transactional",
      } as unknown as SendSpec["executions"][0]["content"],
    }],
  });
  await assert.rejects(recordFinished(deps.sql, [bad], [finished(bad)]));
  const rows = await deps.sql`select id from triggers where id = ${bad.trigger_id}`;
  assert.equal(rows.length, 0);
});

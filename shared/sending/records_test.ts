import assert from "node:assert/strict";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import { newUuidV7 } from "./ids.ts";
import { recordFinished } from "./records.ts";
import type { SendSpec } from "./spec.ts";
import { finishExecutions, newTriggerRecord, zeroCounts } from "./trigger_record.ts";

function smsSpec(teamId: string, channel = "sms"): SendSpec {
  return {
    trigger_id: newUuidV7(),
    job_id: crypto.randomUUID(),
    team_id: teamId,
    sandbox: true,
    trigger_type: "sms",
    recipient_type: "direct_sms",
    recipient: { type: "direct", address: "+14155550123" },
    executions: [{
      id: crypto.randomUUID(),
      content: { channel, template_key: "t", category: "transactional" } as SendSpec["executions"][0]["content"],
    }],
    variables: {},
    metadata: {},
    created_at: Date.now(),
    scheduled_for: null,
  };
}

function finished(spec: SendSpec) {
  const counts = new Map(spec.executions.map((e) => [e.id, { ...zeroCounts(), total_contacts: 1, sent: 1 }]));
  return finishExecutions({ ...newTriggerRecord(spec), started_at: Date.now() }, counts, Date.now());
}

dbTest("recordFinished() writes triggers and their executions together, or neither", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const ok = smsSpec(team.id);
  await recordFinished(deps.sql, [ok], [finished(ok)]);
  const [trigger] = await deps.sql`select status from triggers where id = ${ok.trigger_id}`;
  assert.equal(trigger.status, "completed");
  const [{ n }] = await deps.sql`select count(*)::int as n from executions where trigger_id = ${ok.trigger_id}`;
  assert.equal(n, 1);

  // An execution Postgres refuses (its channel fails the check): the trigger is not left completed alone.
  const bad = smsSpec(team.id, "fax");
  await assert.rejects(recordFinished(deps.sql, [bad], [finished(bad)]));
  const rows = await deps.sql`select id from triggers where id = ${bad.trigger_id}`;
  assert.equal(rows.length, 0);
});

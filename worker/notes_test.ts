import assert from "node:assert/strict";
import { triggerWarnings } from "../api/triggers/warnings.ts";
import { noProviderNote } from "../shared/providers/registry.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { dbTest, testDeps } from "../shared/testing.ts";
import { createWorkerContext } from "./context.ts";
import { runJob } from "./queue.ts";
import { smsFanOut } from "./sms_testing.ts";

dbTest("a trigger's warnings count each message once, however often its batch runs", async () => {
  // No provider and an unbilled outbox, as in production: every message carries the outbox's note.
  const deps = await testDeps({ BILL_OUTBOX: false });
  const w = createWorkerContext(deps);
  const { team, spec, job } = await smsFanOut(deps, 5);
  await upsertTemplate(deps.sql, team.id, "sms", "hi", { body: "Hi {{contact_first_name}}, {{code}}" });
  await runJob(w, job);
  // A redelivered batch records nothing new, and counts nothing new.
  await runJob(w, job);
  assert.deepEqual(await triggerWarnings(deps.sql, spec.trigger_id), {
    missing_variables: ["code"],
    warnings: [
      "Template variables with no value render empty: code (5 messages)",
      `${noProviderNote("sms")} (5 messages)`,
    ],
  });
  const [{ n }] = await deps.sql`select count(*)::int as n from messages where trigger_id = ${spec.trigger_id}`;
  assert.equal(n, 5);
});

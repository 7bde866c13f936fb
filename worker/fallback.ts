/**
 * Channel fallback: a send may name fallback channels (api/sending/fallback.ts), each an execution
 * of the trigger whose spec names the execution before it (`fallback_for`). A fallback execution
 * sends to no one by itself: each counted batch of the execution before it hands it, in the unit of
 * work that counts the batch, a `fallback` job for the contacts that batch did not reach (every
 * message failed: no address, refused, given up), and for WhatsApp (with `fallback_after_minutes`)
 * a delayed one for those whose message has no delivery report by then. The fallback execution's
 * dispatch state counts those jobs like a fan-out's batches, and is closed once the execution before
 * it is final (complete.ts): the trigger completes only after its fallbacks. A filtered message (a
 * preference off, an unsubscribed or inactive contact) is never fallen back around.
 */
import type { Db } from "../shared/db.ts";
import { REACHED_STATES } from "../shared/delivery_reports.ts";
import type { BatchOf } from "../shared/engine/send_state.ts";
import { insertTriggers, markProcessing } from "../shared/sending/records.ts";
import type { SendSpec } from "../shared/sending/spec.ts";
import { type Counts, newTriggerRecord, zeroCounts } from "../shared/sending/trigger_record.ts";
import { type DispatchState, maybeCompleteExecution } from "./complete.ts";
import type { WorkerContext } from "./context.ts";
import { runPageJob } from "./batch.ts";
import { countBatch, startState } from "./fallback_chain.ts";
import type { FallbackJob } from "./fallback_job.ts";
import { contactsByIds } from "./recipients.ts";

/**
 * The contacts a fallback job takes: those of the batch it follows with no message sent, filtered
 * or pending (`failed`); or with no delivery or read report (`undelivered`, a failure reported by
 * the provider included), and none filtered. Contacts deleted since have no id on their message.
 */
async function unreached(db: Db, job: FallbackJob): Promise<string[]> {
  const reached = job.reason === "failed"
    ? db`status <> 'failed'`
    : db`status in ('filtered', 'pending') or coalesce(delivery_status = any(${REACHED_STATES}::text[]), false)`;
  const rows = await db<{ contact_id: string }[]>`
    select contact_id from messages
    where execution_id = ${job.from_execution_id} and batch_no = ${job.from_batch_no} and contact_id is not null
      ${job.after === null ? db`` : db`and contact_id > ${job.after}::uuid`}
      ${job.until === null ? db`` : db`and contact_id <= ${job.until}::uuid`}
    group by contact_id
    having not bool_or(${reached})
    order by contact_id`;
  return rows.map((r) => r.contact_id);
}

/**
 * The `fallback` job: delivers the fallback execution's message to the contacts the batch before
 * did not reach (their preferences on this channel apply), then counts it as a batch of the
 * fallback execution, which may hand on to the next fallback. A message already recorded for a
 * contact (a redelivered job, or the delivery check after the failures' job) is never sent twice:
 * the delivery key is (execution, contact).
 */
export async function handleFallback(w: WorkerContext, job: FallbackJob): Promise<void> {
  await runPageJob(w, job, async (spec) => contactsByIds(w.deps.sql, spec.team_id, await unreached(w.deps.sql, job)));
}

/**
 * Single-recipient sends with fallbacks, once their own messages are final: instead of being
 * recorded finished at once (completeSingles), each runs on as a fan-out of one. Its executions get
 * dispatch states (the first counted as one batch, the fallbacks waiting), in a unit that a
 * redelivered job loses; the first execution's batch is counted with its fallback jobs.
 */
export async function continueWithFallbacks(
  w: WorkerContext,
  specs: SendSpec[],
  counts: Map<string, Counts>,
  startedAt: number,
): Promise<void> {
  if (specs.length === 0) return;
  const { deps } = w;
  await insertTriggers(deps.sql, specs, "processing", startedAt);
  await markProcessing(deps.sql, specs.map((s) => s.trigger_id), startedAt);
  for (const spec of specs) {
    const firsts = spec.executions.filter((e) => e.fallback_for === undefined);
    await deps.atomically(async (unit) => {
      await deps.sendState.putTrigger({ ...newTriggerRecord(spec), status: "processing", started_at: startedAt }, unit);
      for (const execution of spec.executions) {
        const state: DispatchState = { team_id: spec.team_id, filter: {}, after: null, batches: 1, done: true };
        await deps.sendState.putDispatch(execution.id, startState(spec, execution, state), null, unit);
      }
    });
    for (const execution of firsts) {
      const batch: BatchOf = { triggerId: spec.trigger_id, executionId: execution.id, batchNo: 0 };
      const range = { after: null, until: null };
      await countBatch(w, spec, batch, counts.get(execution.id) ?? zeroCounts(), range);
      await maybeCompleteExecution(w, spec.trigger_id, execution.id);
    }
  }
}

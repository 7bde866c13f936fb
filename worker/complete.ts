import type { Db } from "../shared/db.ts";
import { changeAndReport, changeAndStage, relayEvents, type StagedEvent } from "../shared/event_outbox.ts";
import { finishExecutionRows, recordFinishedIn } from "../shared/sending/records.ts";
import type { SendSpec } from "../shared/sending/spec.ts";
import {
  type Counts,
  countStatuses,
  finalStatus,
  finishExecutions,
  newTriggerRecord,
  type TriggerRecord,
  zeroCounts,
} from "../shared/sending/trigger_record.ts";
import type { WorkerContext } from "./context.ts";
import { triggerRecordCompleted } from "./events.ts";
import { type CompletedTrigger, listenersOf, triggerCompletedEvent } from "../shared/webhook_events.ts";
import { deliveryKey, type DeliveryResult, type FinalStatus } from "./deliver.ts";
import type { Prepared } from "./prepare.ts";
import type { RecipientFilter } from "./jobs.ts";

/** How far the fan-out of an execution has got. */
export interface DispatchState {
  team_id: string;
  filter: RecipientFilter;
  /** The last contact id paged. */
  after: string | null;
  /** Batches enqueued so far. */
  batches: number;
  /** Every page has been enqueued. */
  done: boolean;
  /** Promotional push: its batches are spread at the team's PUSH_PROMOTIONAL_RATE (worker/pace.ts). */
  paced?: boolean;
  /** The execution taking the recipients this one does not reach (worker/fallback.ts): closed once this one is final. */
  fallback?: string;
}

/**
 * What a delivery pass of `prepared` leaves counted: its own statuses; or, when it resumed an earlier
 * pass (a redelivered job), what Postgres recorded for `executionIds` (optionally one batch), and
 * the messages Postgres refused to record, which have no row, as failed.
 */
export async function deliveredCounts(
  db: Db,
  prepared: Prepared[],
  result: DeliveryResult,
  executionIds: string[],
  batchNo?: number,
): Promise<Map<string, Counts>> {
  if (!result.resumed) {
    return countStatuses(prepared.map((p) => [p.execution_id, result.statuses.get(deliveryKey(p)) ?? "failed"]));
  }
  const wanted = new Set(executionIds);
  const unrecorded = result.unrecorded.filter((id) => wanted.has(id)).map((id) => [id, "failed"] as const);
  return countStatuses([...await recordedStatuses(db, executionIds, batchNo), ...unrecorded]);
}

/** How many recorded messages of executions (optionally one batch) have each status. */
async function recordedStatuses(db: Db, executionIds: string[], batchNo?: number) {
  const rows = await db<{ execution_id: string; status: FinalStatus; n: number }[]>`
    select execution_id, status, count(*)::int as n from messages
    where execution_id = any(${executionIds}::uuid[]) ${batchNo === undefined ? db`` : db`and batch_no = ${batchNo}`}
    group by execution_id, status`;
  return rows.map((r) => [r.execution_id, r.status, r.n] as const);
}

/**
 * Completes the triggers of single-recipient sends whose every message is final: the triggers and
 * executions are recorded in Postgres with their final counts (two statements for the lot), with
 * the `trigger.completed` events of those this call made final (event_outbox.ts).
 */
export async function completeSingles(
  w: WorkerContext,
  specs: SendSpec[],
  counts: Map<string, Counts>,
  startedAt: number,
) {
  if (specs.length === 0) return;
  const { deps } = w;
  const now = deps.now();
  const records: TriggerRecord[] = specs.map((spec) => {
    const finished = new Map(spec.executions.map((e) => [e.id, counts.get(e.id) ?? zeroCounts()]));
    return finishExecutions({ ...newTriggerRecord(spec), started_at: startedAt }, finished, now);
  });
  // Postgres answers for them from now on (the records written at accept simply expire).
  await changeAndReport(
    deps,
    (tx) => recordFinishedIn(tx, specs, records),
    (final) => records.filter((r) => final.has(r.id)).map(triggerRecordCompleted),
  );
}

/**
 * Completes a fan-out execution when its dispatch is finished and every batch is counted (and its
 * trigger when every execution is). Safe to call any number of times, from any batch.
 */
export async function maybeCompleteExecution(w: WorkerContext, triggerId: string, executionId: string) {
  const { deps } = w;
  const state = await deps.sendState.dispatch<DispatchState>(executionId);
  if (!state?.value.done) return;
  const live = (await deps.sendState.counts(triggerId)).get(executionId);
  const batches = live?.batches ?? 0;
  if (batches < state.value.batches) return;
  const counts: Counts = live
    ? { total_contacts: live.total_contacts, sent: live.sent, failed: live.failed, filtered: live.filtered }
    : zeroCounts();
  const now = deps.now();
  const listeners = await listenersOf(deps, [state.value.team_id]);
  // Committed before the trigger is looked at: of two executions finishing at once, the second to
  // look sees both finished.
  await finishExecutionRows(deps.sql, [{ id: executionId, status: finalStatus(counts), counts, completed_at: now }]);
  // Postgres first: once the live record says completed, the stored trigger says so too. Only the
  // call that makes the trigger final stages its event, in the same transaction.
  const staged: StagedEvent[] = [];
  await changeAndStage(
    deps,
    listeners,
    { team_id: state.value.team_id, type: "trigger.completed" },
    (db) => finishTriggersFromExecutions(db, [triggerId], now),
    (final) => final.map((t) => ({ team_id: t.team_id, ...triggerCompletedEvent(t) })),
    staged,
  );
  await deps.sendState.updateTrigger(triggerId, (record) => {
    const execution = record.executions.find((e) => e.id === executionId);
    if (!execution || execution.counts) return undefined;
    return finishExecutions(record, new Map([[executionId, counts]]), now);
  });
  await relayEvents(deps, staged);
  if (state.value.fallback) await closeFallback(w, triggerId, state.value.fallback);
}

/**
 * Marks a fallback execution's dispatch done once the execution before it is final (it registered
 * all its fallback jobs as it counted its batches), then completes it if those jobs are all counted.
 */
async function closeFallback(w: WorkerContext, triggerId: string, executionId: string): Promise<void> {
  const { sendState, atomically } = w.deps;
  for (;;) {
    const read = await sendState.dispatch<DispatchState>(executionId);
    if (!read || read.value.done) break;
    const closed = { ...read.value, done: true };
    if (await atomically((unit) => sendState.putDispatch(executionId, closed, read.version, unit))) break;
  }
  await maybeCompleteExecution(w, triggerId, executionId);
}

/** A trigger made final by {@linkcode finishTriggersFromExecutions}. */
type FinishedTrigger = CompletedTrigger & { team_id: string };

/**
 * Marks triggers whose executions are all final as final, with the summed counts; answers those it
 * made final.
 */
export async function finishTriggersFromExecutions(
  db: Db,
  triggerIds: string[],
  now: number,
): Promise<FinishedTrigger[]> {
  if (triggerIds.length === 0) return [];
  return await db<FinishedTrigger[]>`
    update triggers t set
      status = case when s.sent = 0 and s.failed > 0 then 'failed' else 'completed' end,
      total_contacts = s.total, sent = s.sent, failed = s.failed, filtered = s.filtered,
      started_at = coalesce(t.started_at, ${new Date(now)}), completed_at = ${new Date(now)}
    from (
      select trigger_id, sum(total_contacts)::int as total, sum(sent_count)::int as sent,
        sum(failed_count)::int as failed, sum(filtered_count)::int as filtered,
        bool_and(status in ('completed', 'failed')) as done
      from executions where trigger_id = any(${triggerIds}::uuid[]) group by trigger_id
    ) s
    where t.id = s.trigger_id and s.done and t.status not in ('completed', 'failed')
    returning t.id, t.team_id, t.flow_type, t.trigger_type, t.status, t.total_contacts, t.sent, t.failed, t.filtered,
      t.completed_at`;
}

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
import type { BatchOf } from "../shared/engine/send_state.ts";
import { log } from "../shared/log.ts";
import { insertTriggers, markProcessing } from "../shared/sending/records.ts";
import type { ExecutionSpec, SendSpec } from "../shared/sending/spec.ts";
import { type Counts, newTriggerRecord, zeroCounts } from "../shared/sending/trigger_record.ts";
import { deliveredCounts, type DispatchState, maybeCompleteExecution } from "./complete.ts";
import { executionContext, specOf, type WorkerContext } from "./context.ts";
import { deliver } from "./deliver.ts";
import type { FallbackJob } from "./fallback_job.ts";
import { prepareMessages } from "./prepare.ts";
import { contactsByIds, devicesOf } from "./recipients.ts";
import { MAX_DELIVERY_ATTEMPTS, nextTryDelay } from "./retry.ts";

/** The execution that takes the recipients `executionId` does not reach, if the send has one. */
export function fallbackOf(spec: SendSpec, executionId: string): ExecutionSpec | undefined {
  return spec.executions.find((e) => e.fallback_for === executionId);
}

/** True when a send has fallback executions. */
export function hasFallbacks(spec: SendSpec): boolean {
  return spec.executions.some((e) => e.fallback_for !== undefined);
}

/**
 * The batch number, within the fallback execution, of the job following batch `fromBatchNo`: two
 * per batch (failures at once, the delivery check later), so a batch always names the same jobs.
 */
export function fallbackBatchNo(fromBatchNo: number, reason: FallbackJob["reason"]): number {
  return fromBatchNo * 2 + (reason === "undelivered" ? 1 : 0);
}

/**
 * The dispatch state an execution of a send starts with: a fallback execution waits for the jobs
 * of the one before it (no page of its own); one with a fallback names it, to close it once final.
 */
export function startState(spec: SendSpec, execution: ExecutionSpec, state: DispatchState): DispatchState {
  const next = fallbackOf(spec, execution.id);
  const named = next ? { ...state, fallback: next.id } : state;
  return execution.fallback_for === undefined ? named : { ...named, after: null, batches: 0, done: false };
}

/** The contacts of a fan-out page, or null bounds for a one-contact send. */
export interface PageRange {
  after: string | null;
  until: string | null;
}

/**
 * Counts a delivered batch of an execution, once (see SendState.countBatch), and in the same unit
 * of work registers and enqueues the fallback jobs it calls for: a redelivered batch, already
 * counted, enqueues none. `counts` are the batch's final counts.
 */
export async function countBatch(
  w: WorkerContext,
  spec: SendSpec,
  batch: BatchOf,
  counts: Counts,
  range: PageRange,
): Promise<void> {
  const { sendState, queue, atomically } = w.deps;
  const execution = spec.executions.find((e) => e.id === batch.executionId);
  const next = execution && fallbackOf(spec, execution.id);
  const jobs = next ? fallbackJobs(spec, execution!, next, batch.batchNo, counts, range) : [];
  if (jobs.length === 0) {
    await atomically((unit) => sendState.countBatch(batch, counts, unit));
    return;
  }
  for (;;) {
    const read = await sendState.dispatch<DispatchState>(next!.id);
    if (!read) throw new Error(`Fallback execution ${next!.id} has no state`);
    const committed = await atomically(async (unit) => {
      await sendState.countBatch(batch, counts, unit);
      const state: DispatchState = { ...read.value, batches: read.value.batches + jobs.length };
      await sendState.putDispatch(next!.id, state, read.version, unit);
      for (const { job, delayMs } of jobs) {
        // Once: a redelivered batch loses this unit (countBatch), so it enqueues nothing again.
        await queue.enqueue(job, { delayMs, forTrigger: job.trigger_id }, unit);
      }
    });
    // Lost: the batch was counted by a redelivery (nothing to do), or another batch registered its
    // jobs first (read again).
    if (committed || await sendState.batchCounted(batch.executionId, batch.batchNo)) return;
  }
}

/** The fallback jobs a batch of `execution` with these final counts calls for. */
function fallbackJobs(
  spec: SendSpec,
  execution: ExecutionSpec,
  next: ExecutionSpec,
  batchNo: number,
  counts: Counts,
  range: PageRange,
): { job: FallbackJob; delayMs: number }[] {
  const job = (reason: FallbackJob["reason"]): FallbackJob => ({
    type: "fallback",
    id: crypto.randomUUID(),
    trigger_id: spec.trigger_id,
    execution_id: next.id,
    batch_no: fallbackBatchNo(batchNo, reason),
    from_execution_id: execution.id,
    from_batch_no: batchNo,
    reason,
    after: range.after,
    until: range.until,
    attempt: 0,
  });
  const out: { job: FallbackJob; delayMs: number }[] = [];
  if (counts.failed > 0) out.push({ job: job("failed"), delayMs: 0 });
  const minutes = spec.fallback_after_minutes;
  if (execution.content.channel === "whatsapp" && minutes !== undefined && counts.sent > 0) {
    out.push({ job: job("undelivered"), delayMs: Math.round(minutes * 60_000) });
  }
  return out;
}

/**
 * The contacts a fallback job takes: those of the batch it follows with no message sent, filtered
 * or pending (`failed`); or with no delivery or read report (`undelivered`, a failure reported by
 * the provider included), and none filtered. Contacts deleted since have no id on their message.
 */
async function unreached(db: Db, job: FallbackJob): Promise<string[]> {
  const reached = job.reason === "failed"
    ? db`status <> 'failed'`
    : db`status in ('filtered', 'pending') or coalesce(delivery_status in ('delivered', 'read', 'complained'), false)`;
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
  const { deps } = w;
  const batch: BatchOf = { triggerId: job.trigger_id, executionId: job.execution_id, batchNo: job.batch_no };
  if (await deps.sendState.batchCounted(job.execution_id, job.batch_no)) {
    await maybeCompleteExecution(w, job.trigger_id, job.execution_id);
    return;
  }
  const spec = await specOf(w, job.trigger_id);
  const execution = spec?.executions.find((e) => e.id === job.execution_id);
  if (!spec || !execution) {
    log("error", "fallback: send not found", { trigger_id: job.trigger_id, execution_id: job.execution_id });
    return;
  }
  const contacts = await contactsByIds(deps.sql, spec.team_id, await unreached(deps.sql, job));
  const devices = execution.content.channel === "push"
    ? await devicesOf(deps.sql, contacts.map((c) => c.id))
    : undefined;
  const ctx = await executionContext(w, spec, execution, job.batch_no);
  const prepared = await prepareMessages(
    ctx,
    contacts.map((contact) => ({ kind: "contact", contact, devices: devices?.get(contact.id) ?? [] })),
  );
  const result = await deliver(deps, prepared, { lastAttempt: job.attempt + 1 >= MAX_DELIVERY_ATTEMPTS });
  if (result.pending > 0) {
    const retry: FallbackJob = { ...job, id: crypto.randomUUID(), attempt: job.attempt + 1 };
    await deps.queue.enqueue(retry, {
      delayMs: nextTryDelay(job.attempt, result.retryAfterMs),
      forTrigger: job.trigger_id,
    });
    return;
  }
  const counts = (await deliveredCounts(deps.sql, prepared, result, [job.execution_id], job.batch_no))
    .get(job.execution_id) ?? zeroCounts();
  await countBatch(w, spec, batch, counts, { after: job.after, until: job.until });
  await maybeCompleteExecution(w, job.trigger_id, job.execution_id);
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

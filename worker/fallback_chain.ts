/**
 * How the executions of a send with fallback channels are chained (worker/fallback.ts tells the
 * whole story): which execution follows which, the dispatch states they start with, and the
 * counting of a batch that registers and enqueues the fallback jobs it calls for.
 */
import type { BatchOf } from "../shared/engine/send_state.ts";
import type { ExecutionSpec, SendSpec } from "../shared/sending/spec.ts";
import type { Counts } from "../shared/sending/trigger_record.ts";
import type { DispatchState } from "./complete.ts";
import type { WorkerContext } from "./context.ts";
import type { FallbackJob } from "./fallback_job.ts";

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

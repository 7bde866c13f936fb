/** The counters kept per execution while it runs (Deno.KvU64, added to with `sum`). */
export const COUNTER_FIELDS = ["total", "sent", "failed", "filtered", "batches"] as const;
export type CounterField = typeof COUNTER_FIELDS[number];

/** Width (ms) of the time slots pending trigger records are filed under. */
export const PENDING_SLOT_MS = 10;

/** The slot of a time (ms since the epoch). */
export function pendingSlot(ms: number): number {
  return Math.floor(ms / PENDING_SLOT_MS);
}

/** Every KV key of the sending pipeline. */
export const sendKeys = {
  /** The live record of a trigger (status, executions, final counts) once the worker has taken it up. */
  trigger: (triggerId: string) => ["send_triggers", triggerId] as const,
  /**
   * A page of pending records of triggers just accepted, filed by the time slot of their ids (UUID
   * v7): one KV value for the triggers of a group commit, rather than one key per trigger.
   */
  pendingPage: (slot: number, pageId: string) => ["send_pending", slot, pageId] as const,
  /** Every pending page of a time slot. */
  pendingSlot: (slot: number) => ["send_pending", slot] as const,
  /** All counters of a trigger's executions. */
  counters: (triggerId: string) => ["send_counts", triggerId] as const,
  /** One counter of one execution. */
  counter: (triggerId: string, executionId: string, field: CounterField) =>
    ["send_counts", triggerId, executionId, field] as const,
  /** Set with the counts of a delivered batch, so a redelivered batch is never counted twice. */
  batchDone: (executionId: string, batchNo: number) => ["send_batch_done", executionId, batchNo] as const,
  /** How far the fan-out of an execution has got: cursor, batches enqueued, finished or not. */
  dispatch: (executionId: string) => ["send_dispatch", executionId] as const,
  /** Until when (ms since the epoch) a team's promotional push fan-outs have booked their batches (worker/pace.ts). */
  pushPace: (teamId: string) => ["send_push_pace", teamId] as const,
  /** Jobs of a trigger that the queue gave up on after its retries. */
  undelivered: (triggerId: string, jobId: string) => ["send_undelivered", triggerId, jobId] as const,
  /**
   * The trigger of an execution whose trigger lives only in KV (an OTP sandbox send's), so that the
   * execution views find it by the execution id too.
   */
  executionTrigger: (executionId: string) => ["send_execution_trigger", executionId] as const,
  /** Prefix of a trigger's undelivered jobs. */
  undeliveredOf: (triggerId: string) => ["send_undelivered", triggerId] as const,
};

import type { Counts, PendingEntry, TriggerRecord } from "../sending/trigger_record.ts";
import type { UnitOfWork, Versioned } from "./ports.ts";

/** An execution's running counts, with how many of its batches were counted. */
export type LiveCounts = Counts & { batches: number };

/**
 * What the engine holds of a send while it runs: its live record (or, until the worker takes it up,
 * the pending record written when it was accepted), the running counts of its executions, and
 * whether the queue gave up on one of its jobs.
 */
export interface TriggerState {
  record: TriggerRecord;
  /** The record is the one written at accept: Postgres may know more of the send since. */
  pending: boolean;
  counts: Map<string, LiveCounts>;
  givenUp: boolean;
}

/**
 * The state of a send behind one port: everything the accept path, the worker and the tracking
 * views read or change of a send between its accept and its final row in Postgres. Each engine
 * keeps it its own way (Deno KV: pending pages, KvU64 sums, markers; Postgres: rows of migration
 * 019), and one contract suite (send_state_contract_test.ts) holds both to the same answers.
 */
export interface SendState {
  /** What the engine holds of trigger `triggerId`; null when nothing. */
  trigger(triggerId: string): Promise<TriggerState | null>;
  /** The trigger of execution `executionId`, when the engine holds it (pending, or kept only here). */
  triggerOfExecution(executionId: string): Promise<string | null>;
  /** The running counts of a trigger's executions. */
  counts(triggerId: string): Promise<Map<string, LiveCounts>>;
  /** True when the queue gave up on a job of the trigger: it cannot complete. */
  givenUp(triggerId: string): Promise<boolean>;
  /** Records that the queue gave up on job `jobId` of the trigger. */
  markGivenUp(triggerId: string, jobId: string): Promise<void>;
  /**
   * Runs `work` as one unit of writes that check nothing (accepting sends: their records and jobs),
   * batched as the engine does it best (on Deno KV with other callers' writes into one commit).
   * `weight` is how many writes the unit makes, at most.
   */
  acceptAtomically(work: (unitOfWork: UnitOfWork) => Promise<void>, weight: number): Promise<void>;
  /** Records sends just accepted as pending (in `unitOfWork`, with their jobs). */
  recordAccepted(entries: PendingEntry[], unitOfWork: UnitOfWork): Promise<void>;
  /** Writes a trigger's live record whatever it was (in `unitOfWork` when given). */
  putTrigger(record: TriggerRecord, unitOfWork?: UnitOfWork): Promise<void>;
  /**
   * Changes a trigger's live record with `change` by compare-and-set, reading again when another
   * change came first; `change` answers undefined to leave it. Answers the record as stored after.
   */
  updateTrigger(
    triggerId: string,
    change: (record: TriggerRecord) => TriggerRecord | undefined,
  ): Promise<TriggerRecord | undefined>;
  /**
   * Adds a delivered batch's counts to its execution's, once: the batch's done mark is set in the same
   * unit, and a batch counted before makes the unit lose (`atomically` answers false).
   */
  countBatch(batch: BatchOf, counts: Counts, unitOfWork: UnitOfWork): Promise<void>;
  /** True once batch `batchNo` of the execution was counted. */
  batchCounted(executionId: string, batchNo: number): Promise<boolean>;
  /** How far an execution's fan-out has got (its dispatch cursor), with the version a change names. */
  dispatch<T>(executionId: string): Promise<Versioned<T> | null>;
  /** Moves the dispatch cursor from version `expected` (null: none yet); a lost check makes the unit lose. */
  putDispatch<T>(executionId: string, state: T, expected: string | null, unitOfWork: UnitOfWork): Promise<void>;
  /** Until when (ms since the epoch) a team's promotional push has booked its batches (worker/pace.ts). */
  pushPace(teamId: string): Promise<Versioned<number> | null>;
  /** Books the team's promotional push until `until`, from version `expected`, in the unit. */
  putPushPace(teamId: string, until: number, expected: string | null, unitOfWork: UnitOfWork): Promise<void>;
}

/** One batch of an execution's fan-out. */
export interface BatchOf {
  triggerId: string;
  executionId: string;
  batchNo: number;
}

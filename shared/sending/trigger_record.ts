import type { Channel } from "../providers/types.ts";
import type { SendSpec } from "./spec.ts";

/** A trigger's or an execution's status (lowercase, as the interface shows it). */
export type SendStatus = "pending" | "processing" | "completed" | "failed";

/** What a trigger or an execution delivered. */
export interface Counts {
  total_contacts: number;
  sent: number;
  failed: number;
  filtered: number;
}

/** One channel of a trigger in its live record; `counts` is set once the execution is final. */
export interface ExecutionRecord {
  id: string;
  channel: Channel;
  status: SendStatus;
  counts: Counts | null;
  completed_at: number | null;
}

/** The live record of a trigger, kept in the engine's send state (SendState) from its accept on (times in ms since the epoch). */
export interface TriggerRecord {
  id: string;
  team_id: string;
  flow_type: "direct_channel" | "workflow";
  /** A send's channel(s); for a workflow trigger, 'workflow' (an API start) or 'event'. */
  trigger_type: SendSpec["trigger_type"] | "workflow" | "event";
  recipient_type: string | null;
  job_id: string;
  status: SendStatus;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  scheduled_for: number | null;
  executions: ExecutionRecord[];
  /** The workflow an API start names (workflow triggers), read until the worker records the run. */
  workflow_id?: string;
}

/** How long a finished trigger's live record stays (Postgres keeps it for good). */
export const FINISHED_RECORD_TTL_MS = 24 * 3_600_000;

/** No counts yet. */
export function zeroCounts(): Counts {
  return { total_contacts: 0, sent: 0, failed: 0, filtered: 0 };
}

/** Where a message stands: final (sent, failed, filtered), or pending a provider's answer. */
export type MessageStatus = "sent" | "failed" | "filtered" | "pending";

/** Counts by execution of message statuses, `n` messages an entry (1 when absent); pending ones are not counted. */
export function countStatuses(
  entries: Iterable<readonly [executionId: string, status: MessageStatus, n?: number]>,
): Map<string, Counts> {
  const out = new Map<string, Counts>();
  for (const [executionId, status, n = 1] of entries) {
    let c = out.get(executionId);
    if (!c) out.set(executionId, c = zeroCounts());
    if (status === "pending") continue;
    c.total_contacts += n;
    c[status] += n;
  }
  return out;
}

/** Sum of several counts. */
export function addCounts(items: Counts[]): Counts {
  const sum = zeroCounts();
  for (const c of items) {
    sum.total_contacts += c.total_contacts;
    sum.sent += c.sent;
    sum.failed += c.failed;
    sum.filtered += c.filtered;
  }
  return sum;
}

/** The final status of finished counts: failed when nothing was sent and something failed. */
export function finalStatus(counts: Counts): "completed" | "failed" {
  return counts.sent === 0 && counts.failed > 0 ? "failed" : "completed";
}

/**
 * A pending record as the Acceptor's pages keep it: without the fields every pending record has the
 * same value in (status, start and end times, each execution's status and counts). V8 writes each
 * field's name with its value, and a page is written for every send accepted.
 */
export type PendingEntry = Omit<TriggerRecord, "status" | "started_at" | "completed_at" | "executions"> & {
  executions: Pick<ExecutionRecord, "id" | "channel">[];
};

/** The pending entry of a send just accepted. */
export function pendingEntryOf(spec: SendSpec): PendingEntry {
  return {
    id: spec.trigger_id,
    team_id: spec.team_id,
    flow_type: "direct_channel",
    trigger_type: spec.trigger_type,
    recipient_type: spec.recipient_type,
    job_id: spec.job_id,
    created_at: spec.created_at,
    scheduled_for: spec.scheduled_for,
    executions: spec.executions.map((e) => ({ id: e.id, channel: e.content.channel })),
  };
}

/** The pending record an entry stands for (a whole record, as pages held them before entries, reads back as it is). */
export function pendingRecordOf(entry: PendingEntry | TriggerRecord): TriggerRecord {
  return {
    status: "pending",
    started_at: null,
    completed_at: null,
    ...entry,
    executions: entry.executions.map((e) => ({ status: "pending", counts: null, completed_at: null, ...e })),
  };
}

/** The pending record of a send just accepted. */
export function newTriggerRecord(spec: SendSpec): TriggerRecord {
  return pendingRecordOf(pendingEntryOf(spec));
}

/** Marks executions of a record final with their counts, and the trigger too once every execution is. */
export function finishExecutions(
  record: TriggerRecord,
  finished: Map<string, Counts>,
  now: number,
): TriggerRecord {
  const executions = record.executions.map((e) => {
    const counts = finished.get(e.id);
    if (!counts || e.counts) return e;
    return { ...e, status: finalStatus(counts), counts, completed_at: now };
  });
  const done = executions.every((e) => e.counts);
  if (!done) {
    return { ...record, executions, status: "processing", started_at: record.started_at ?? now };
  }
  const total = addCounts(executions.map((e) => e.counts!));
  return {
    ...record,
    executions,
    status: finalStatus(total),
    started_at: record.started_at ?? now,
    completed_at: record.completed_at ?? now,
  };
}

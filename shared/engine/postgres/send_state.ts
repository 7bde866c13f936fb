import type postgres from "postgres";
import type { Sql } from "../../db.ts";
import {
  type Counts,
  FINISHED_RECORD_TTL_MS,
  type PendingEntry,
  pendingRecordOf,
  type TriggerRecord,
} from "../../sending/trigger_record.ts";
import { LostRace, type UnitOfWork, type Versioned } from "../ports.ts";
import type { BatchOf, LiveCounts, SendState, TriggerState } from "../send_state.ts";
import { PostgresRecords } from "./records.ts";
import { postgresAtomically, transactionOf } from "./unit.ts";

/** How long a running send's state is kept at most (a paced fan-out spreads over at most 30 days). */
const RUNNING_TTL_MS = 31 * 24 * 3_600_000;
/** How long the record written at accept is kept: the worker records each send (Postgres, or a live record) long before. */
const ACCEPTED_TTL_MS = 24 * 3_600_000;
/** How long a batch's counted mark and a given-up job are kept (longer than any redelivery). */
const MARK_TTL_MS = 7 * 24 * 3_600_000;

/**
 * The state of a send in Postgres, shared by every replica: trigger records, the execution-to-trigger
 * index and dispatch cursors as `engine_records` (015), running counts as one row an execution added
 * to with `+`, and batch marks and given-up jobs as rows of their own (019). A send just accepted is
 * a pending record written in the accept's transaction, so there are no pages to search.
 */
export class PostgresSendState implements SendState {
  #sql: Sql;
  #triggers: PostgresRecords;
  #dispatch: PostgresRecords;
  #pace: PostgresRecords;

  constructor(sql: Sql) {
    this.#sql = sql;
    this.#triggers = new PostgresRecords(sql, "send_triggers");
    this.#dispatch = new PostgresRecords(sql, "send_dispatch");
    this.#pace = new PostgresRecords(sql, "send_push_pace");
  }

  async trigger(triggerId: string): Promise<TriggerState | null> {
    const record = (await this.#triggers.get<TriggerRecord>("", triggerId))?.value;
    if (!record) return null;
    const final = record.status === "completed" || record.status === "failed";
    const [counts, givenUp] = final
      ? [new Map(), false]
      : await Promise.all([this.counts(triggerId), this.givenUp(triggerId)]);
    return { record, pending: record.status === "pending", counts, givenUp };
  }

  async acceptAtomically(work: (unitOfWork: UnitOfWork) => Promise<void>): Promise<void> {
    await postgresAtomically(this.#sql, work);
  }

  async triggerOfExecution(executionId: string): Promise<string | null> {
    const [row]: [{ value: string }?] = await this.#sql`
      select value from engine_records
      where kind = 'execution_triggers' and scope = '' and id = ${executionId} and expires_at > now()`;
    return row?.value ?? null;
  }

  async counts(triggerId: string): Promise<Map<string, LiveCounts>> {
    const rows = await this.#sql<
      { execution_id: string; total: string; sent: string; failed: string; filtered: string; batches: string }[]
    >`
      select execution_id, total, sent, failed, filtered, batches from engine_send_counts
      where trigger_id = ${triggerId} and expires_at > now()`;
    return new Map(rows.map((r) => [r.execution_id, {
      total_contacts: Number(r.total),
      sent: Number(r.sent),
      failed: Number(r.failed),
      filtered: Number(r.filtered),
      batches: Number(r.batches),
    }]));
  }

  async givenUp(triggerId: string): Promise<boolean> {
    const [row] = await this.#sql`
      select 1 from engine_send_given_up where trigger_id = ${triggerId} and expires_at > now() limit 1`;
    return row !== undefined;
  }

  async markGivenUp(triggerId: string, jobId: string): Promise<void> {
    await this.#sql`
      insert into engine_send_given_up (trigger_id, job_id, expires_at)
      values (${triggerId}, ${jobId}, ${expiry(MARK_TTL_MS)})
      on conflict do nothing`;
  }

  async recordAccepted(entries: PendingEntry[], unitOfWork: UnitOfWork): Promise<void> {
    if (entries.length === 0) return;
    const tx = transactionOf(unitOfWork);
    const expires = expiry(ACCEPTED_TTL_MS);
    const rows = entries.flatMap((entry) => [
      { kind: "send_triggers", id: entry.id, value: pendingRecordOf(entry) as unknown },
      ...entry.executions.map((e) => ({ kind: "execution_triggers", id: e.id, value: entry.id as unknown })),
    ]);
    // One statement for the lot: an accept commits a group of sends at once.
    await tx`
      insert into engine_records (kind, scope, id, value, version, active_until, expires_at)
      select r.kind, '', r.id, r.value, nextval('engine_record_versions'), null, ${expires}
      from jsonb_to_recordset(${tx.json(rows as postgres.JSONValue)}) as r(kind text, id text, value jsonb)
      on conflict (kind, scope, id) do nothing`;
  }

  async putTrigger(record: TriggerRecord, unitOfWork?: UnitOfWork): Promise<void> {
    const sql = unitOfWork ? transactionOf(unitOfWork) : this.#sql;
    const final = record.status === "completed" || record.status === "failed";
    await sql`
      insert into engine_records (kind, scope, id, value, version, active_until, expires_at)
      values ('send_triggers', '', ${record.id}, ${sql.json(record as unknown as postgres.JSONValue)},
        nextval('engine_record_versions'), null, ${expiry(final ? FINISHED_RECORD_TTL_MS : RUNNING_TTL_MS)})
      on conflict (kind, scope, id) do update set value = excluded.value, version = excluded.version,
        expires_at = excluded.expires_at`;
  }

  async updateTrigger(
    triggerId: string,
    change: (record: TriggerRecord) => TriggerRecord | undefined,
  ): Promise<TriggerRecord | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const read = await this.#triggers.get<TriggerRecord>("", triggerId);
      if (!read) return undefined;
      const next = change(read.value);
      if (!next) return read.value;
      const final = next.status === "completed" || next.status === "failed";
      const ttlMs = final ? FINISHED_RECORD_TTL_MS : RUNNING_TTL_MS;
      if (await this.#triggers.put("", triggerId, next, { expected: read.version, ttlMs, activeUntil: null })) {
        return next;
      }
    }
    throw new Error(`Cannot update trigger ${triggerId}: too many concurrent changes`);
  }

  async countBatch(batch: BatchOf, counts: Counts, unitOfWork: UnitOfWork): Promise<void> {
    const tx = transactionOf(unitOfWork);
    const [marked] = await tx`
      insert into engine_send_batches (execution_id, batch_no, expires_at)
      values (${batch.executionId}, ${batch.batchNo}, ${expiry(MARK_TTL_MS)})
      on conflict do nothing returning 1`;
    if (!marked) throw new LostRace();
    await tx`
      insert into engine_send_counts as c (trigger_id, execution_id, total, sent, failed, filtered, batches, expires_at)
      values (${batch.triggerId}, ${batch.executionId}, ${counts.total_contacts}, ${counts.sent}, ${counts.failed},
        ${counts.filtered}, 1, ${expiry(RUNNING_TTL_MS)})
      on conflict (trigger_id, execution_id) do update set
        total = c.total + excluded.total, sent = c.sent + excluded.sent, failed = c.failed + excluded.failed,
        filtered = c.filtered + excluded.filtered, batches = c.batches + 1, expires_at = excluded.expires_at`;
  }

  async batchCounted(executionId: string, batchNo: number): Promise<boolean> {
    const [row] = await this.#sql`
      select 1 from engine_send_batches
      where execution_id = ${executionId} and batch_no = ${batchNo} and expires_at > now()`;
    return row !== undefined;
  }

  dispatch<T>(executionId: string): Promise<Versioned<T> | null> {
    return this.#dispatch.get<T>("", executionId);
  }

  async putDispatch<T>(executionId: string, state: T, expected: string | null, unitOfWork: UnitOfWork): Promise<void> {
    await this.#dispatch.put(
      "",
      executionId,
      state,
      { expected, ttlMs: RUNNING_TTL_MS, activeUntil: null },
      unitOfWork,
    );
  }

  pushPace(teamId: string): Promise<Versioned<number> | null> {
    return this.#pace.get<number>("", teamId);
  }

  async putPushPace(teamId: string, until: number, expected: string | null, unitOfWork: UnitOfWork): Promise<void> {
    const ttlMs = Math.max(1, until - Date.now()) + 60_000;
    await this.#pace.put("", teamId, until, { expected, ttlMs, activeUntil: null }, unitOfWork);
  }
}

/** The time `ms` from now. */
function expiry(ms: number): Date {
  return new Date(Date.now() + ms);
}

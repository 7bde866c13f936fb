import { uuidV7Time } from "../../sending/ids.ts";
import { COUNTER_FIELDS, type CounterField, pendingSlot, sendKeys } from "../../sending/keys.ts";
import {
  type Counts,
  FINISHED_RECORD_TTL_MS,
  type PendingEntry,
  pendingRecordOf,
  type TriggerRecord,
  zeroCounts,
} from "../../sending/trigger_record.ts";
import type { UnitOfWork, Versioned } from "../ports.ts";
import type { BatchOf, LiveCounts, SendState, TriggerState } from "../send_state.ts";
import type { KvCommitter } from "../../kv.ts";
import { KvUnit, kvUnitOf } from "./unit.ts";

/** How long a pending page is kept: the worker records each trigger (Postgres, or its own key) long before. */
const PENDING_TTL_MS = 24 * 3_600_000;
/** How long a batch's done mark is kept (longer than any redelivery). */
const BATCH_MARK_TTL_MS = 7 * 24 * 3_600_000;
/** How long a dispatch cursor is kept (a paced fan-out spreads its batches over at most the queue's longest delay). */
const DISPATCH_TTL_MS = 31 * 24 * 3_600_000;
/** How long a given-up job is remembered. */
const GIVEN_UP_TTL_MS = 7 * 24 * 3_600_000;
/** What one pending page may hold: a KV value stays under 64 KiB. */
const PAGE_BYTES = 56 * 1024;
/** A little over what a pending entry takes serialised. */
const ENTRY_BYTES = 600;

/**
 * The state of a send in Deno KV: pending records filed in pages by the time slot of their ids
 * (one value per group commit rather than a key per send), the live record of a trigger the worker
 * took up, KvU64 counters summed by each batch in the commit that sets its done mark, and the
 * given-up markers the queue writes (`keysIfUndelivered`).
 */
export class KvSendState implements SendState {
  #kv: Deno.Kv;
  #committer: KvCommitter;

  constructor(kv: Deno.Kv, committer: KvCommitter) {
    this.#kv = kv;
    this.#committer = committer;
  }

  async acceptAtomically(work: (unitOfWork: UnitOfWork) => Promise<void>, weight: number): Promise<void> {
    const unit = new KvUnit();
    await work(unit);
    // No checks in it: the process's group commit may merge it with any other writes.
    await this.#committer.commit((op) => {
      for (const build of unit.builds) build(op);
    }, weight);
  }

  async trigger(triggerId: string): Promise<TriggerState | null> {
    const live = (await this.#kv.get<TriggerRecord>(sendKeys.trigger(triggerId))).value;
    const record = live ?? await findPending(this.#kv, triggerId);
    if (!record) return null;
    const final = record.status === "completed" || record.status === "failed";
    const [counts, givenUp] = final
      ? [new Map(), false]
      : await Promise.all([this.counts(triggerId), this.givenUp(triggerId)]);
    return { record, pending: !live, counts, givenUp };
  }

  async triggerOfExecution(executionId: string): Promise<string | null> {
    const kept = (await this.#kv.get<string>(sendKeys.executionTrigger(executionId))).value;
    if (kept !== null) return kept;
    const pending = await findPending(this.#kv, executionId, (e) => e.executions.some((x) => x.id === executionId));
    return pending?.id ?? null;
  }

  async counts(triggerId: string): Promise<Map<string, LiveCounts>> {
    const out = new Map<string, LiveCounts>();
    for await (const entry of this.#kv.list<Deno.KvU64>({ prefix: sendKeys.counters(triggerId) })) {
      const [, , executionId, field] = entry.key as [string, string, string, CounterField];
      if (!COUNTER_FIELDS.includes(field)) continue;
      let counts = out.get(executionId);
      if (!counts) out.set(executionId, counts = { ...zeroCounts(), batches: 0 });
      const value = Number(entry.value.value);
      if (field === "total") counts.total_contacts = value;
      else counts[field] = value;
    }
    return out;
  }

  async givenUp(triggerId: string): Promise<boolean> {
    for await (const _ of this.#kv.list({ prefix: sendKeys.undeliveredOf(triggerId) }, { limit: 1 })) return true;
    return false;
  }

  async markGivenUp(triggerId: string, jobId: string): Promise<void> {
    await this.#kv.set(sendKeys.undelivered(triggerId, jobId), true, { expireIn: GIVEN_UP_TTL_MS });
  }

  recordAccepted(entries: PendingEntry[], unitOfWork: UnitOfWork): Promise<void> {
    const pages = pendingPages(entries);
    kvUnitOf(unitOfWork).add(pages.map((p) => p.key), (op) => writePages(op, pages));
    return Promise.resolve();
  }

  async putTrigger(record: TriggerRecord, unitOfWork?: UnitOfWork): Promise<void> {
    const key = sendKeys.trigger(record.id);
    const build = (op: Deno.AtomicOperation) => op.set(key, record, recordExpiry(record));
    if (unitOfWork) kvUnitOf(unitOfWork).add([key], build);
    else await this.#kv.set(key, record, recordExpiry(record));
  }

  async updateTrigger(
    triggerId: string,
    change: (record: TriggerRecord) => TriggerRecord | undefined,
  ): Promise<TriggerRecord | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const entry = await this.#kv.get<TriggerRecord>(sendKeys.trigger(triggerId));
      if (!entry.value) return undefined;
      const next = change(entry.value);
      if (!next) return entry.value;
      const res = await this.#kv.atomic().check(entry).set(entry.key, next, recordExpiry(next)).commit();
      if (res.ok) return next;
    }
    throw new Error(`Cannot update trigger ${triggerId}: too many concurrent changes`);
  }

  countBatch(batch: BatchOf, counts: Counts, unitOfWork: UnitOfWork): Promise<void> {
    const mark = sendKeys.batchDone(batch.executionId, batch.batchNo);
    const counter = (field: CounterField) => sendKeys.counter(batch.triggerId, batch.executionId, field);
    // The counters are sums: only the mark is a key units must not share a commit on.
    kvUnitOf(unitOfWork).add([mark], (op) => {
      op.check({ key: mark, versionstamp: null })
        .set(mark, counts, { expireIn: BATCH_MARK_TTL_MS })
        .sum(counter("total"), BigInt(counts.total_contacts))
        .sum(counter("sent"), BigInt(counts.sent))
        .sum(counter("failed"), BigInt(counts.failed))
        .sum(counter("filtered"), BigInt(counts.filtered))
        .sum(counter("batches"), 1n);
    });
    return Promise.resolve();
  }

  async batchCounted(executionId: string, batchNo: number): Promise<boolean> {
    return (await this.#kv.get(sendKeys.batchDone(executionId, batchNo))).versionstamp !== null;
  }

  dispatch<T>(executionId: string): Promise<Versioned<T> | null> {
    return this.#versioned<T>(sendKeys.dispatch(executionId));
  }

  putDispatch<T>(executionId: string, state: T, expected: string | null, unitOfWork: UnitOfWork): Promise<void> {
    this.#checkedSet(sendKeys.dispatch(executionId), state, expected, DISPATCH_TTL_MS, unitOfWork);
    return Promise.resolve();
  }

  pushPace(teamId: string): Promise<Versioned<number> | null> {
    return this.#versioned<number>(sendKeys.pushPace(teamId));
  }

  putPushPace(teamId: string, until: number, expected: string | null, unitOfWork: UnitOfWork): Promise<void> {
    const ttl = Math.max(1, until - Date.now()) + 60_000;
    this.#checkedSet(sendKeys.pushPace(teamId), until, expected, ttl, unitOfWork);
    return Promise.resolve();
  }

  async #versioned<T>(key: Deno.KvKey): Promise<Versioned<T> | null> {
    const entry = await this.#kv.get<T>(key);
    return entry.versionstamp === null ? null : { value: entry.value as T, version: entry.versionstamp };
  }

  #checkedSet(key: Deno.KvKey, value: unknown, expected: string | null, ttlMs: number, unitOfWork: UnitOfWork): void {
    kvUnitOf(unitOfWork).add([key], (op) => {
      op.check({ key, versionstamp: expected }).set(key, value, { expireIn: ttlMs });
    });
  }
}

/** A finished record is kept a day (Postgres keeps it for good); a running one until it finishes. */
function recordExpiry(record: TriggerRecord): { expireIn: number } | undefined {
  const final = record.status === "completed" || record.status === "failed";
  return final ? { expireIn: FINISHED_RECORD_TTL_MS } : undefined;
}

/** Pending entries filed in pages, one KV value under 64 KiB per time slot of their ids. */
export function pendingPages(entries: PendingEntry[]): { key: Deno.KvKey; entries: PendingEntry[] }[] {
  const slots = new Map<number, PendingEntry[]>();
  for (const entry of entries) {
    const slot = pendingSlot(uuidV7Time(entry.id) ?? entry.created_at);
    let members = slots.get(slot);
    if (!members) slots.set(slot, members = []);
    members.push(entry);
  }
  const perPage = Math.floor(PAGE_BYTES / ENTRY_BYTES);
  const pages: { key: Deno.KvKey; entries: PendingEntry[] }[] = [];
  for (const [slot, members] of slots) {
    for (let i = 0; i < members.length; i += perPage) {
      const page = members.slice(i, i + perPage);
      pages.push({ key: sendKeys.pendingPage(slot, page[0].id), entries: page });
    }
  }
  return pages;
}

/** Writes pending pages into a commit. */
export function writePages(op: Deno.AtomicOperation, pages: { key: Deno.KvKey; entries: PendingEntry[] }[]): void {
  for (const page of pages) op.set(page.key, page.entries, { expireIn: PENDING_TTL_MS });
}

/**
 * The pending record of a trigger just accepted, from the pages of its time slot. `id` is the
 * trigger's id, or with `holds` the id of one of its executions, made with the trigger's time.
 */
export async function findPending(
  kv: Deno.Kv,
  id: string,
  holds: (entry: PendingEntry) => boolean = (e) => e.id === id,
): Promise<TriggerRecord | undefined> {
  const at = uuidV7Time(id);
  if (at === undefined) return undefined;
  for await (const page of kv.list<PendingEntry[]>({ prefix: sendKeys.pendingSlot(pendingSlot(at)) })) {
    // Only the entry found is made a whole record (a slot of a burst holds hundreds).
    const found = page.value.find(holds);
    if (found) return pendingRecordOf(found);
  }
  return undefined;
}

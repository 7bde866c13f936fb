import type { Db } from "../db.ts";
import type { KvCommitter } from "../kv.ts";
import type { SendGroupJob, SendStoredJob } from "./jobs.ts";
import { pendingSlot, sendKeys } from "./keys.ts";
import { acceptPressure } from "./pressure.ts";
import { insertTriggers } from "./records.ts";
import type { SendSpec } from "./spec.ts";
import { newTriggerRecord, type TriggerRecord } from "./trigger_record.ts";
import { uuidV7Time } from "./ids.ts";

/** Retry delays of queue jobs (ms): the queue redelivers a job whose handler threw. */
export const JOB_BACKOFF_MS = [1_000, 5_000, 15_000, 60_000, 300_000];

interface Waiting {
  spec: SendSpec;
  record: ReturnType<typeof newTriggerRecord>;
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Deno KV refuses a queue message over 64 KiB; keep well under it (V8 serialisation is a little larger). */
const MESSAGE_BYTES = 56 * 1024;
/**
 * What one group commit may carry: sends and their pending records stay well under Deno KV's
 * 800 KiB a commit, also when the committer merges the group with another role's writes.
 */
const GROUP_BYTES = 240 * 1024;
const GROUP_SENDS = 400;
/** How long a pending page is kept: the worker records each trigger (Postgres, or its own key) long before. */
const PENDING_TTL_MS = 24 * 3_600_000;

const NON_ASCII = /[^ -~\t\n\r]/;

/** About what V8 serialisation takes for a value: a byte a character, two when any is not ASCII. */
function sizeOf(value: unknown): number {
  const text = JSON.stringify(value);
  return NON_ASCII.test(text) ? text.length * 2 : text.length;
}

function newJobId(): string {
  return crypto.randomUUID();
}

/**
 * Group commit of accepted sends. Sends accepted by concurrent requests are written in one KV
 * commit: the pending records of their triggers, filed in a few pages by the time slot of the
 * trigger ids (UUID v7), so that GET /triggers/{id} answers at once without a KV key per send; and
 * the sends themselves as a few `send-group` queue messages (each under KV's 64 KiB limit). Each
 * caller is answered only after the commit holding its send. No Postgres write on this path,
 * except for a send too large for a queue message and for scheduled sends, which are recorded in
 * Postgres (where GET /triggers/{id} finds them) and enqueued by trigger id, with the delay.
 */
export class Acceptor {
  #committer: KvCommitter;
  #db: Db;
  #waiting: Waiting[] = [];
  #running = false;

  constructor(committer: KvCommitter, db: Db) {
    this.#committer = committer;
    this.#db = db;
  }

  /** Accepts a send: resolves once its trigger record and its job are committed. */
  async accept(spec: SendSpec, now: number): Promise<void> {
    acceptPressure.note(Date.now());
    const bytes = sizeOf(spec);
    if (spec.scheduled_for !== null || bytes > MESSAGE_BYTES) {
      await insertTriggers(this.#db, [spec], "pending", now);
      const job: SendStoredJob = { type: "send-stored", id: newJobId(), trigger_id: spec.trigger_id };
      const delay = spec.scheduled_for === null ? 0 : Math.max(0, spec.scheduled_for - now);
      await this.#committer.commit((op) => {
        op.enqueue(job, {
          delay,
          backoffSchedule: JOB_BACKOFF_MS,
          keysIfUndelivered: [sendKeys.undelivered(spec.trigger_id, job.id)],
        });
      }, 1);
      return;
    }
    const record = newTriggerRecord(spec);
    await new Promise<void>((resolve, reject) => {
      this.#waiting.push({ spec, record, bytes, resolve, reject });
      if (!this.#running) this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    // Let the requests of this tick join the first group.
    await Promise.resolve();
    try {
      while (this.#waiting.length > 0) {
        const group = this.#take();
        try {
          const messages = chunk(group.map((w) => ({ value: w.spec, bytes: w.bytes })));
          const pages = pendingPages(group);
          const bytes = group.reduce((n, w) => n + w.bytes + 400, 0);
          await this.#committer.commit((op) => {
            for (const page of pages) op.set(page.key, page.records, { expireIn: PENDING_TTL_MS });
            for (const sends of messages) {
              const job: SendGroupJob = { type: "send-group", id: newJobId(), sends, attempt: 0 };
              op.enqueue(job, {
                backoffSchedule: JOB_BACKOFF_MS,
                keysIfUndelivered: [sendKeys.undelivered(sends[0].trigger_id, job.id)],
              });
            }
          }, pages.length + messages.length + Math.ceil(bytes / 1024));
          for (const w of group) w.resolve();
        } catch (err) {
          for (const w of group) w.reject(err);
        }
      }
    } finally {
      this.#running = false;
    }
  }

  /** The next group: as many waiting sends as one commit may carry. */
  #take(): Waiting[] {
    const group: Waiting[] = [];
    let bytes = 0;
    while (
      this.#waiting.length > 0 && group.length < GROUP_SENDS &&
      (group.length === 0 || bytes + this.#waiting[0].bytes <= GROUP_BYTES)
    ) {
      const next = this.#waiting.shift()!;
      bytes += next.bytes + 400;
      group.push(next);
    }
    return group;
  }
}

/** Splits values into lists of at most MESSAGE_BYTES each. */
function chunk<T>(items: { value: T; bytes: number }[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length > 0 && bytes + item.bytes > MESSAGE_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item.value);
    bytes += item.bytes + 8;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** The group's pending records, one page (a KV value under 64 KiB) per time slot of their ids. */
function pendingPages(group: Waiting[]): { key: Deno.KvKey; records: TriggerRecord[] }[] {
  const slots = new Map<number, Waiting[]>();
  for (const w of group) {
    const slot = pendingSlot(uuidV7Time(w.spec.trigger_id) ?? w.spec.created_at);
    slots.set(slot, [...slots.get(slot) ?? [], w]);
  }
  const pages: { key: Deno.KvKey; records: TriggerRecord[] }[] = [];
  for (const [slot, members] of slots) {
    for (const records of chunk(members.map((w) => ({ value: w.record, bytes: 600 })))) {
      pages.push({ key: sendKeys.pendingPage(slot, records[0].id), records });
    }
  }
  return pages;
}

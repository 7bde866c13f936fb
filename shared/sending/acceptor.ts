import { Batcher } from "../batcher.ts";
import type { Deps } from "../deps.ts";
import { queueDelay, type SendGroupJob, type SendStoredJob } from "./jobs.ts";
import { pendingPages } from "../engine/kv/send_state.ts";
import { type BurstDeferral, inBurst } from "./pressure.ts";
import { SPOOL_GRACE_MS, SPOOL_SLOT_MS, type SpoolDrainJob, spooled, spoolJob, spoolSlot } from "../engine/kv/spool.ts";
import type { SendState } from "../engine/send_state.ts";
import type { JobQueue } from "../engine/queue.ts";
import { insertTriggers } from "./records.ts";
import type { SendSpec } from "./spec.ts";
import { type PendingEntry, pendingEntryOf } from "./trigger_record.ts";

/** What the Acceptor reads of an item (a send, a workflow start): its trigger and when it is due. */
export interface AcceptItem {
  trigger_id: string;
  /** Milliseconds since the epoch. */
  created_at: number;
  scheduled_for: number | null;
}

/** The engine ports an Acceptor writes through: the state of the sends it accepts, and the queue of their jobs. */
export interface AcceptEngine {
  sendState: SendState;
  queue: JobQueue<{ type: string }>;
}

/** What differs between the kinds of items an Acceptor takes. */
export interface AcceptFlow<T extends AcceptItem> {
  /** The pending entry of an item's trigger, which GET /triggers/{id} reads until the worker records it. */
  pending(item: T): PendingEntry;
  /** The queue job carrying items accepted together. */
  groupJob(id: string, items: T[]): { type: string; id: string };
  /** Records an item that does not travel in a group job (scheduled, or too large) and enqueues it alone. */
  acceptStored(item: T, now: number): Promise<void>;
  /** Counts accepted items and, in a burst of them, spools their group jobs (see spool.ts). */
  deferral?: BurstDeferral;
}

interface Waiting<T> {
  item: T;
  pending: PendingEntry;
  bytes: number;
}

/** Deno KV refuses a queue message over 64 KiB; keep well under it (V8 serialisation is a little larger). */
const MESSAGE_BYTES = 56 * 1024;
/**
 * What one group commit may carry: items and their pending records stay well under Deno KV's
 * 800 KiB a commit, also when the committer merges the group with another role's writes.
 */
const GROUP_BYTES = 240 * 1024;
const GROUP_ITEMS = 400;

const NON_ASCII = /[^ -~\t\n\r]/;
/** Strings up to this long are counted at two bytes a character without looking at them. */
const SHORT = 64;

/**
 * A little over what V8 serialisation takes for a value: a byte a character of its strings, two in
 * a string with any character that is not ASCII (and in any short string or key, without the look:
 * the regular expression was most of the walk's cost), and a few bytes a field. A walk, not
 * JSON.stringify: a third of its cost on a send.
 */
export function sizeOf(value: unknown): number {
  switch (typeof value) {
    case "string":
      return 3 + (value.length <= SHORT || NON_ASCII.test(value) ? value.length * 2 : value.length);
    case "object": {
      if (value === null) return 1;
      let n = 4;
      if (Array.isArray(value)) {
        for (const item of value) n += sizeOf(item);
        return n;
      }
      for (const key in value) n += 3 + key.length * 2 + sizeOf((value as Record<string, unknown>)[key]);
      return n;
    }
    default:
      return 9;
  }
}

function newJobId(): string {
  return crypto.randomUUID();
}

/**
 * Group commit of accepted items (sends, workflow starts). Items accepted by concurrent requests
 * are written in one KV commit: the pending records of their triggers, filed in a few pages by the
 * time slot of the trigger ids (UUID v7), so that GET /triggers/{id} answers at once without a KV
 * key per item; and the items themselves as a few group jobs (each under KV's 64 KiB limit). Each
 * caller is answered only after the commit holding its item. During a burst of accepts the group
 * jobs are written to the spool instead of the queue (see spool.ts). No Postgres write on this path,
 * except for an item too large for a queue message and for scheduled ones, which the flow records
 * in Postgres (where GET /triggers/{id} finds them) and enqueues by trigger id, with the delay.
 */
export class Acceptor<T extends AcceptItem> {
  #engine: AcceptEngine;
  #flow: AcceptFlow<T>;
  #groups: Batcher<Waiting<T>>;
  /** Spool slots whose drain job this acceptor has committed. */
  #drained = new Set<number>();

  /** A group is written through the engine's ports (`engine`), whichever engine holds them. */
  constructor(flow: AcceptFlow<T>, engine: AcceptEngine) {
    this.#engine = engine;
    this.#flow = flow;
    // One commit a group (all or nothing): a failed group is tried again item by item.
    this.#groups = new Batcher((group) => this.#commit(group), {
      maxWeight: GROUP_BYTES,
      maxCount: GROUP_ITEMS,
      retryAlone: true,
    });
  }

  /** Accepts an item: resolves once its trigger record and its job are committed. */
  async accept(item: T, now: number): Promise<void> {
    this.#flow.deferral?.pressure.note(Date.now());
    const bytes = sizeOf(item);
    if (item.scheduled_for !== null || bytes > MESSAGE_BYTES) return await this.#flow.acceptStored(item, now);
    await this.#groups.add({ item, pending: this.#flow.pending(item), bytes }, bytes + 400);
  }

  async #commit(group: Waiting<T>[]): Promise<void> {
    const messages = chunk(group.map((w) => ({ value: w.item, bytes: w.bytes })));
    const bytes = group.reduce((n, w) => n + w.bytes + 400, 0);
    const now = Date.now();
    // In a burst the jobs go to the spool, and the first commit of each spool slot enqueues its drain.
    const slot = this.#flow.deferral && inBurst(this.#flow.deferral, now) ? spoolSlot(now) : undefined;
    const drain: SpoolDrainJob | undefined = slot !== undefined && !this.#drained.has(slot)
      ? { type: "spool-drain", id: newJobId(), slot }
      : undefined;
    // On Deno KV the group's commit also writes its pending pages (the adapter files them by slot).
    const pages = pendingPages(group.map((w) => w.pending)).length;
    const weight = pages + messages.length + 1 + Math.ceil(bytes / 1024);
    const { sendState, queue } = this.#engine;
    await sendState.acceptAtomically(async (unit) => {
      await sendState.recordAccepted(group.map((w) => w.pending), unit);
      for (const items of messages) {
        const job = this.#flow.groupJob(newJobId(), items);
        if (slot !== undefined) spoolJob(unit, slot, job, items[0].trigger_id);
        else await queue.enqueue(job, { forTrigger: items[0].trigger_id }, unit);
      }
      if (drain) await queue.enqueue(drain, { delayMs: drainDelay(drain, now) }, unit);
    }, weight);
    this.#spooled(slot, messages.length, drain);
  }

  /** Counts the jobs a commit spooled, and remembers the slot whose drain it enqueued. */
  #spooled(slot: number | undefined, jobs: number, drain: SpoolDrainJob | undefined): void {
    if (slot === undefined) return;
    spooled.add(jobs);
    if (drain) this.#noteDrained(slot);
  }

  /** Remembers that `slot` has its drain job (the last minute's slots are kept). */
  #noteDrained(slot: number): void {
    this.#drained.add(slot);
    if (this.#drained.size > 120) {
      for (const s of this.#drained) if (s < slot - 60) this.#drained.delete(s);
    }
  }
}

/** How long the drain job of a spool slot waits: until the slot's commits have landed. */
function drainDelay(drain: SpoolDrainJob, now: number): number {
  return Math.max(0, (drain.slot + 1) * SPOOL_SLOT_MS + SPOOL_GRACE_MS - now);
}

/** Splits values into lists of at most MESSAGE_BYTES each. */
function chunk<V>(items: { value: V; bytes: number }[]): V[][] {
  const out: V[][] = [];
  let current: V[] = [];
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

/**
 * The acceptor of sends: `send-group` jobs; a scheduled or oversized send is recorded in Postgres
 * and enqueued as a `send-stored` job. Everything goes through the engine's ports in `deps`.
 */
export function sendAcceptor(deps: Deps, deferral?: BurstDeferral): Acceptor<SendSpec> {
  const { sql, queue } = deps;
  return new Acceptor<SendSpec>({
    pending: pendingEntryOf,
    groupJob: (id, sends): SendGroupJob => ({ type: "send-group", id, sends, attempt: 0 }),
    async acceptStored(spec, now) {
      await insertTriggers(sql, [spec], "pending", now);
      const job: SendStoredJob = { type: "send-stored", id: newJobId(), trigger_id: spec.trigger_id };
      if (spec.scheduled_for !== null) job.due_at = spec.scheduled_for;
      await queue.enqueue(job, { delayMs: queueDelay(job.due_at ?? now, now), forTrigger: spec.trigger_id });
    },
    deferral,
  }, { sendState: deps.sendState, queue });
}

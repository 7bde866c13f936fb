import { log } from "../log.ts";
import type { Hit } from "./ports.ts";

/** One fixed window of one subject under a named limit. */
export interface SlotKey {
  name: string;
  subject: string;
  /** The window's number: floor(time / windowMs). */
  window: number;
  windowMs: number;
}

/** Hits to add to a window's stored count. */
export interface CountAdd {
  key: SlotKey;
  add: number;
  /** How long the count is kept: a window past the window's end at least. */
  keepMs: number;
}

/** Where an engine keeps window counts: read once per window, then added to in groups. */
export interface CountStore {
  /** The count stored for `key` (0 when none). */
  read(key: SlotKey): Promise<number>;
  /**
   * Adds each item's `add` to its stored count, kept `keepMs` from now; answers each stored total
   * after its add, or undefined for an item not written (it is added again by a later flush).
   */
  add(items: CountAdd[]): Promise<(number | undefined)[]>;
}

/** Something read from a store once, then counted on in memory. */
export interface Loaded {
  loaded: Promise<void>;
  /** Hits waiting for `loaded`: they count on this very entry, so it must not be evicted meanwhile. */
  waiting: number;
}

/** Waits until `entry` is read, keeping it marked as in use (by a hit still to count on it) meanwhile. */
export async function whenLoaded(entry: Loaded): Promise<void> {
  entry.waiting++;
  try {
    await entry.loaded;
  } finally {
    entry.waiting--;
  }
}

interface Slot extends Loaded {
  key: SlotKey;
  /** Hits known to this process: the store's total when last read, plus ours since. */
  count: number;
  /** Our hits not yet written to the store. */
  pending: number;
  windowEnd: number;
}

/**
 * Fixed-window counts kept in memory and written to a store a few times a second, in one write for
 * all windows touched (never one write per request), merging other processes' hits as it goes:
 * within one process the count is exact; another process's hits count once either has flushed.
 */
export class WindowSlots {
  #store: CountStore;
  #slots = new Map<string, Slot>();
  #flusher: Flusher;

  constructor(store: CountStore, options: { flushMs?: number } = {}) {
    this.#store = store;
    this.#flusher = new Flusher(() => this.#write(), options.flushMs);
  }

  /** Counts one hit of `subject` against `limit` per `windowMs`, unless the limit is reached. */
  async hit(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit> {
    const slot = this.#slot(name, subject, windowMs, now);
    await whenLoaded(slot);
    const resetAt = slot.windowEnd;
    if (slot.count >= limit) return { allowed: false, limit, remaining: 0, resetAt };
    slot.count++;
    slot.pending++;
    this.#flusher.schedule();
    return { allowed: true, limit, remaining: Math.max(0, limit - slot.count), resetAt };
  }

  #slot(name: string, subject: string, windowMs: number, now: number): Slot {
    const window = Math.floor(now / windowMs);
    const id = `${name}\u0000${subject}\u0000${windowMs}\u0000${window}`;
    let slot = this.#slots.get(id);
    if (!slot) {
      const created: Slot = {
        key: { name, subject, window, windowMs },
        count: 0,
        pending: 0,
        loaded: Promise.resolve(),
        waiting: 0,
        windowEnd: (window + 1) * windowMs,
      };
      created.loaded = this.#store.read(created.key).then((stored) => {
        created.count += stored;
      }, (err) => {
        // Not kept: the next hit reads again rather than failing for the rest of the window.
        if (this.#slots.get(id) === created) this.#slots.delete(id);
        throw err;
      });
      slot = created;
      this.#slots.set(id, slot);
      this.#evict(now);
    }
    return slot;
  }

  /** Drops the ended windows, but none a hit is still to be counted in (a hit timed before the end may come after). */
  #evict(now: number): void {
    for (const [id, slot] of this.#slots) {
      if (slot.windowEnd < now && slot.pending === 0 && slot.waiting === 0) this.#slots.delete(id);
    }
  }

  /** Writes pending hits to the store now; rejects when some could not be (they stay pending). */
  flush(): Promise<void> {
    return this.#flusher.flush();
  }

  async #write(): Promise<void> {
    const dirty = [...this.#slots.values()].filter((s) => s.pending > 0);
    if (dirty.length === 0) return;
    const taken = dirty.map((s) => s.pending);
    const items = dirty.map((s, i) => ({ key: s.key, add: taken[i], keepMs: 2 * s.key.windowMs }));
    let failure: unknown;
    const totals = await this.#store.add(items).catch((err) => {
      failure = err;
      return items.map(() => undefined);
    });
    dirty.forEach((s, i) => {
      const total = totals[i];
      if (total === undefined) return;
      s.pending -= taken[i];
      // Others' hits since we last read become visible here.
      s.count = Math.max(s.count, total + s.pending);
    });
    if (totals.some((t) => t === undefined)) throw failure ?? new Error("Cannot write some window counts");
  }

  /** Stops the timer and writes what is pending. */
  close(): Promise<void> {
    return this.#flusher.close();
  }
}

/**
 * Runs `write` a while after the first `schedule()` since the last run (never two at once), and again
 * later when it fails: what it writes waits in memory meanwhile, so that many hits cost one write.
 */
export class Flusher {
  #write: () => Promise<void>;
  #flushMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> | undefined;

  constructor(write: () => Promise<void>, flushMs = 200) {
    this.#write = write;
    this.#flushMs = flushMs;
  }

  /** Runs the write after the flush interval, unless one is due already. */
  schedule(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch((err) => {
        // What it writes stays pending (only a write that landed takes it): written by the next try.
        log("warn", "counter hits not written, will retry", { error: String(err) });
        this.schedule();
      });
    }, this.#flushMs);
  }

  /** Runs the write now (or joins the one running). */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  /** Stops the timer and writes what is pending. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}

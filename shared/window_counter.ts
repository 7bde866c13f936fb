import { kvKeys } from "./kv.ts";
import { log } from "./log.ts";

/** The outcome of counting one hit. */
export interface Hit {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the window ends (ms since the epoch). */
  resetAt: number;
}

interface Slot {
  key: Deno.KvKey;
  /** Hits known to this process: KV's total when last read, plus ours since. */
  count: number;
  /** Our hits not yet written to KV. */
  pending: number;
  loaded: Promise<void>;
  windowEnd: number;
  expireIn: number;
}

/**
 * Fixed-window counters kept in Deno KV. Hits are counted in memory and written to KV in one
 * atomic commit a few times a second (never one commit per request), merging other processes'
 * counts; within one process the count is exact.
 */
export class WindowCounter {
  #kv: Deno.Kv;
  #slots = new Map<string, Slot>();
  #flushMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> | undefined;

  constructor(kv: Deno.Kv, options: { flushMs?: number } = {}) {
    this.#kv = kv;
    this.#flushMs = options.flushMs ?? 200;
  }

  /** Counts one hit of `subject` against `limit` per `windowMs`, unless the limit is reached. */
  async hit(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit> {
    const slot = this.#slot(name, subject, windowMs, now);
    await slot.loaded;
    const resetAt = slot.windowEnd;
    if (slot.count >= limit) return { allowed: false, limit, remaining: 0, resetAt };
    slot.count++;
    slot.pending++;
    this.#schedule();
    return { allowed: true, limit, remaining: Math.max(0, limit - slot.count), resetAt };
  }

  #slot(name: string, subject: string, windowMs: number, now: number): Slot {
    const window = Math.floor(now / windowMs);
    const id = `${name}\u0000${subject}\u0000${windowMs}\u0000${window}`;
    let slot = this.#slots.get(id);
    if (!slot) {
      const key = name === "api" ? kvKeys.rateLimit(subject, window) : kvKeys.limiter(name, subject, window);
      const created: Slot = {
        key: [...key],
        count: 0,
        pending: 0,
        loaded: Promise.resolve(),
        windowEnd: (window + 1) * windowMs,
        expireIn: windowMs * 2,
      };
      created.loaded = this.#kv.get<number>(created.key).then((e) => {
        created.count += e.value ?? 0;
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

  #evict(now: number): void {
    for (const [id, slot] of this.#slots) {
      if (slot.windowEnd < now && slot.pending === 0) this.#slots.delete(id);
    }
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch((err) => {
        // The hits stay pending (only a commit that landed takes them): written by the next try.
        log("warn", "counter hits not written to KV, will retry", { error: String(err) });
        this.#schedule();
      });
    }, this.#flushMs);
  }

  /** Writes pending hits to KV now. */
  flush(): Promise<void> {
    if (!this.#flushing) {
      this.#flushing = this.#write().finally(() => (this.#flushing = undefined));
    }
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const dirty = [...this.#slots.values()].filter((s) => s.pending > 0);
    // Ten keys per commit: each needs a check on what we read, so other processes are not lost.
    for (let i = 0; i < dirty.length; i += 10) {
      const group = dirty.slice(i, i + 10);
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await this.#kv.getMany<number[]>(group.map((s) => s.key));
        const taken = group.map((s) => s.pending);
        const op = this.#kv.atomic();
        group.forEach((s, j) => {
          op.check(current[j]).set(s.key, (current[j].value ?? 0) + taken[j], { expireIn: s.expireIn });
        });
        const res = await op.commit();
        if (!res.ok) continue;
        group.forEach((s, j) => {
          s.pending -= taken[j];
          // Others' hits since we last read become visible here.
          s.count = Math.max(s.count, (current[j].value ?? 0) + taken[j] + s.pending);
        });
        break;
      }
    }
  }

  /** Stops the timer and writes what is pending. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}

import { kvKeys } from "../../kv.ts";
import { log } from "../../log.ts";
import type { Hit, WindowCounters } from "../ports.ts";

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

/** The latest hits of one subject under a sliding-window limit. */
interface Log {
  key: Deno.KvKey;
  /** Times (ms) of the latest `keep` hits known to this process, oldest first: KV's when last read, plus ours since. */
  times: number[];
  /** Times of our hits not yet written to KV. */
  pending: number[];
  loaded: Promise<void>;
  /** How many of the latest hits matter: the limit. */
  keep: number;
  windowMs: number;
}

/**
 * Rate-limit counters kept in Deno KV: fixed windows (`hit`: API requests an hour, with a reset time
 * to show) and sliding ones (`hitSliding`: the OTP limits). Hits are counted in memory and written
 * to KV in one atomic commit a few times a second (never one commit per request), merging other
 * processes' hits; within one process the count is exact.
 */
export class WindowCounter implements WindowCounters {
  #kv: Deno.Kv;
  #slots = new Map<string, Slot>();
  #logs = new Map<string, Log>();
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

  /**
   * Counts one hit of `subject` unless `limit` hits were counted in the last `windowMs` (a sliding
   * window: a fixed one lets twice the limit through around its boundary, the end of one window
   * and the start of the next). A refused hit's `resetAt` is when the oldest of those leaves the
   * window; an allowed one's is when every hit it counted has.
   */
  async hitSliding(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit> {
    const log = this.#log(name, subject, limit, windowMs);
    await log.loaded;
    const recent = log.times.filter((t) => t > now - windowMs);
    if (recent.length >= limit) {
      return { allowed: false, limit, remaining: 0, resetAt: recent[recent.length - limit] + windowMs };
    }
    log.times = latest(insertSorted(log.times, now), log.keep);
    log.pending.push(now);
    this.#schedule();
    const oldest = Math.min(recent[0] ?? now, now);
    return { allowed: true, limit, remaining: limit - recent.length - 1, resetAt: oldest + windowMs };
  }

  #log(name: string, subject: string, limit: number, windowMs: number): Log {
    const id = `${name}\u0000${subject}\u0000${windowMs}`;
    let log = this.#logs.get(id);
    if (!log) {
      const created: Log = {
        key: [...kvKeys.slidingLimiter(name, subject)],
        times: [],
        pending: [],
        loaded: Promise.resolve(),
        keep: limit,
        windowMs,
      };
      created.loaded = this.#kv.get<number[]>(created.key).then((e) => {
        created.times = latest(merge(e.value ?? [], created.times), created.keep);
      }, (err) => {
        // Not kept: the next hit reads again rather than failing for the rest of the window.
        if (this.#logs.get(id) === created) this.#logs.delete(id);
        throw err;
      });
      this.#evictLogs(Date.now());
      log = created;
      this.#logs.set(id, log);
    }
    log.keep = Math.max(log.keep, limit);
    return log;
  }

  #evictLogs(now: number): void {
    for (const [id, log] of this.#logs) {
      const last = log.times[log.times.length - 1] ?? 0;
      if (last <= now - log.windowMs && log.pending.length === 0) this.#logs.delete(id);
    }
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
    await this.#writeCounts();
    await this.#writeLogs();
  }

  async #writeCounts(): Promise<void> {
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

  async #writeLogs(): Promise<void> {
    const dirty = [...this.#logs.values()].filter((l) => l.pending.length > 0);
    // As with the counts: ten keys a commit, each checked against what was read.
    for (let i = 0; i < dirty.length; i += 10) {
      const group = dirty.slice(i, i + 10);
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await this.#kv.getMany<number[][]>(group.map((l) => l.key));
        const taken = group.map((l) => l.pending.length);
        const written = group.map((l, j) =>
          latest(merge(current[j].value ?? [], l.pending.slice(0, taken[j]).sort((a, b) => a - b)), l.keep)
        );
        const op = this.#kv.atomic();
        group.forEach((l, j) => op.check(current[j]).set(l.key, written[j], { expireIn: l.windowMs }));
        const res = await op.commit();
        if (!res.ok) continue;
        group.forEach((l, j) => {
          l.pending.splice(0, taken[j]);
          // Others' hits since we last read become visible here.
          l.times = latest(merge(written[j], [...l.pending].sort((a, b) => a - b)), l.keep);
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

/** Two ascending lists as one. */
function merge(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++]);
  return out;
}

function insertSorted(list: number[], value: number): number[] {
  return merge(list, [value]);
}

/** The last `n` of an ascending list. */
function latest(list: number[], n: number): number[] {
  return list.length > n ? list.slice(list.length - n) : list;
}

import { kvKeys } from "../../kv.ts";
import type { Hit, WindowCounters } from "../ports.ts";
import {
  type CountAdd,
  type CountStore,
  Flusher,
  type Loaded,
  type SlotKey,
  whenLoaded,
  WindowSlots,
} from "../window_slots.ts";

/** The latest hits of one subject under a sliding-window limit. */
interface Log extends Loaded {
  key: Deno.KvKey;
  /** Times (ms) of the latest `keep` hits known to this process, oldest first: KV's when last read, plus ours since. */
  times: number[];
  /** Times of our hits not yet written to KV. */
  pending: number[];
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
  #fixed: WindowSlots;
  #logs = new Map<string, Log>();
  #logFlusher: Flusher;

  constructor(kv: Deno.Kv, options: { flushMs?: number } = {}) {
    this.#kv = kv;
    this.#fixed = new WindowSlots(new KvCountStore(kv), options);
    this.#logFlusher = new Flusher(() => this.#writeLogs(), options.flushMs);
  }

  /** Counts one hit of `subject` against `limit` per `windowMs`, unless the limit is reached. */
  hit(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit> {
    return this.#fixed.hit(name, subject, limit, windowMs, now);
  }

  /**
   * Counts one hit of `subject` unless `limit` hits were counted in the last `windowMs` (a sliding
   * window: a fixed one lets twice the limit through around its boundary, the end of one window
   * and the start of the next). A refused hit's `resetAt` is when the oldest of those leaves the
   * window; an allowed one's is when every hit it counted has.
   */
  async hitSliding(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit> {
    const log = this.#log(name, subject, limit, windowMs);
    await whenLoaded(log);
    const recent = log.times.filter((t) => t > now - windowMs);
    if (recent.length >= limit) {
      return { allowed: false, limit, remaining: 0, resetAt: recent[recent.length - limit] + windowMs };
    }
    log.times = latest(insertSorted(log.times, now), log.keep);
    log.pending.push(now);
    this.#logFlusher.schedule();
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
        waiting: 0,
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

  /** Drops the logs whose hits all left the window, but none a hit is still to be counted on (one loading has no times yet). */
  #evictLogs(now: number): void {
    for (const [id, log] of this.#logs) {
      const last = log.times[log.times.length - 1] ?? 0;
      if (last <= now - log.windowMs && log.pending.length === 0 && log.waiting === 0) this.#logs.delete(id);
    }
  }

  /** Writes pending hits to KV now. */
  async flush(): Promise<void> {
    await Promise.all([this.#fixed.flush(), this.#logFlusher.flush()]);
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

  /** Stops the timers and writes what is pending. */
  async close(): Promise<void> {
    await Promise.all([this.#fixed.close(), this.#logFlusher.close()]);
  }
}

/** A fixed window's KV key: API requests an hour under their own prefix, other limits under theirs. */
function countKey({ name, subject, window }: SlotKey): Deno.KvKey {
  return name === "api" ? kvKeys.rateLimit(subject, window) : kvKeys.limiter(name, subject, window);
}

/** Window counts in KV: ten keys a commit, each checked against what was read, so other processes' adds are not lost. */
class KvCountStore implements CountStore {
  #kv: Deno.Kv;

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  async read(key: SlotKey): Promise<number> {
    return (await this.#kv.get<number>(countKey(key))).value ?? 0;
  }

  async add(items: CountAdd[]): Promise<(number | undefined)[]> {
    const totals: (number | undefined)[] = items.map(() => undefined);
    let failure: unknown;
    for (let i = 0; i < items.length; i += 10) {
      const group = items.slice(i, i + 10);
      const keys = group.map((item) => countKey(item.key));
      try {
        for (let attempt = 0; attempt < 5; attempt++) {
          const current = await this.#kv.getMany<number[]>(keys);
          const op = this.#kv.atomic();
          group.forEach((item, j) => {
            op.check(current[j]).set(keys[j], (current[j].value ?? 0) + item.add, { expireIn: item.keepMs });
          });
          if (!(await op.commit()).ok) continue;
          group.forEach((item, j) => (totals[i + j] = (current[j].value ?? 0) + item.add));
          break;
        }
      } catch (err) {
        // This group stays unwritten; the others are kept.
        failure = err;
      }
    }
    if (failure && totals.every((t) => t === undefined)) throw failure;
    return totals;
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

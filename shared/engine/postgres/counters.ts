import type { Sql } from "../../db.ts";
import type { Hit, WindowCounters } from "../ports.ts";
import { type CountAdd, type CountStore, type SlotKey, WindowSlots } from "../window_slots.ts";

/** Fixed-window counts in Postgres: every window touched since the last flush added to in one statement. */
class PostgresCountStore implements CountStore {
  #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async read(key: SlotKey): Promise<number> {
    const start = key.window * key.windowMs;
    const [row]: [{ count: number }?] = await this.#sql`
      select count from engine_window_counts
      where name = ${key.name} and subject = ${key.subject} and window_ms = ${key.windowMs} and window_start = ${start}`;
    return row?.count ?? 0;
  }

  async add(items: CountAdd[]): Promise<number[]> {
    const rows = items.map(({ key }) => ({
      name: key.name,
      subject: key.subject,
      window_ms: key.windowMs,
      window_start: key.window * key.windowMs,
    }));
    const column = <K extends keyof Row>(name: K) => rows.map((r) => r[name]);
    const totals: (Row & { count: number })[] = await this.#sql`
      insert into engine_window_counts as w (name, subject, window_ms, window_start, count, expires_at)
      select name, subject, window_ms, window_start, count, now() + keep_ms * interval '1 millisecond'
      from unnest(
        ${column("name")}::text[], ${column("subject")}::text[], ${column("window_ms")}::int8[],
        ${column("window_start")}::int8[], ${items.map((i) => i.add)}::int4[], ${items.map((i) => i.keepMs)}::float8[]
      ) as t(name, subject, window_ms, window_start, count, keep_ms)
      on conflict (name, subject, window_ms, window_start) do update set count = w.count + excluded.count,
        expires_at = greatest(w.expires_at, excluded.expires_at)
      returning name, subject, window_ms, window_start, count`;
    const byRow = new Map(totals.map((t) => [rowId(t), t.count]));
    return rows.map((r) => byRow.get(rowId(r)) ?? 0);
  }
}

/** The primary key of a window's row. */
interface Row {
  name: string;
  subject: string;
  window_ms: number;
  window_start: number;
}

function rowId(row: Row): string {
  return JSON.stringify([row.name, row.subject, row.window_ms, row.window_start]);
}

/**
 * Limits up to this many hits a window are counted exactly across replicas; larger ones are buffered
 * (a flush's worth of other replicas' hits over is well under 10 % of them).
 */
const EXACT_UP_TO = 1_000;
/** How long a window's row is kept after the window ends (the sweep deletes it then). */
const KEEP_AFTER_MS = 60_000;

/**
 * Window counters in Postgres. Fixed windows (API and trigger rate limits, one hit per request) are
 * counted in memory and added to their rows a few times a second in one statement, as the KV engine
 * does: exact within a process, other replicas' hits merged at each flush; a limit of at most
 * EXACT_UP_TO is counted a hit a statement instead, exact across replicas. Sliding windows (the OTP
 * send limits, which must hold across replicas) are one statement a hit that counts and checks under
 * the row's lock (`INSERT … ON CONFLICT DO UPDATE … WHERE`), so they are exact everywhere.
 */
export class PostgresCounters implements WindowCounters {
  #sql: Sql;
  #fixed: WindowSlots;

  constructor(sql: Sql, options: { flushMs?: number } = {}) {
    this.#sql = sql;
    this.#fixed = new WindowSlots(new PostgresCountStore(sql), options);
  }

  async hit(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit> {
    if (limit > EXACT_UP_TO) return await this.#fixed.hit(name, subject, limit, windowMs, now);
    // A small limit (the free plan's 100 an hour) would be overrun by far more than 10 % by the hits
    // other replicas count between two flushes: one statement a hit, counted under the row's lock.
    const start = Math.floor(now / windowMs) * windowMs;
    const resetAt = start + windowMs;
    if (limit <= 0) return { allowed: false, limit, remaining: 0, resetAt };
    const [row]: [{ count: number }?] = await this.#sql`
      insert into engine_window_counts as w (name, subject, window_ms, window_start, count, expires_at)
      values (${name}, ${subject}, ${windowMs}, ${start}, 1, ${new Date(resetAt + KEEP_AFTER_MS)})
      on conflict (name, subject, window_ms, window_start) do update set count = w.count + 1
        where w.count < ${limit}
      returning count`;
    return row
      ? { allowed: true, limit, remaining: limit - row.count, resetAt }
      : { allowed: false, limit, remaining: 0, resetAt };
  }

  async hitSliding(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit> {
    if (limit <= 0) return { allowed: false, limit, remaining: 0, resetAt: now + windowMs };
    const since = now - windowMs;
    // The hits still in the window, this one added, the latest `limit` of them kept.
    const [row]: [{ times: number[] }?] = await this.#sql`
      insert into engine_sliding_windows as s (name, subject, times, expires_at)
      values (${name}, ${subject}, array[${now}::int8], ${new Date(now + windowMs)})
      on conflict (name, subject) do update set
        times = array(
          select t from (
            select t from unnest(s.times || ${now}::int8) t where t > ${since}::int8 order by t desc limit ${limit}
          ) latest order by t
        ),
        expires_at = greatest(s.expires_at, excluded.expires_at)
        where (select count(*) from unnest(s.times) t where t > ${since}::int8) < ${limit}
      returning times`;
    if (row) {
      const times = row.times.map(Number);
      return { allowed: true, limit, remaining: limit - times.length, resetAt: Math.min(...times) + windowMs };
    }
    const [held]: [{ times: number[] }?] = await this.#sql`
      select times from engine_sliding_windows where name = ${name} and subject = ${subject}`;
    const recent = (held?.times ?? []).map(Number).filter((t) => t > since).sort((a, b) => a - b);
    const oldest = recent[recent.length - limit] ?? now;
    return { allowed: false, limit, remaining: 0, resetAt: oldest + windowMs };
  }

  flush(): Promise<void> {
    return this.#fixed.flush();
  }

  close(): Promise<void> {
    return this.#fixed.close();
  }
}

import type { Sql } from "../../db.ts";
import type { Hit, WindowCounters } from "../ports.ts";

/**
 * Window counters in Postgres: every hit is one statement that counts and checks the limit under
 * the row's lock (`INSERT … ON CONFLICT DO UPDATE … WHERE`), so the count is exact across replicas.
 */
export class PostgresCounters implements WindowCounters {
  #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async hit(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit> {
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const resetAt = windowStart + windowMs;
    if (limit <= 0) return { allowed: false, limit, remaining: 0, resetAt };
    // Kept a window past its end, as the KV engine keeps it.
    const expiresAt = new Date(resetAt + windowMs);
    const [row]: [{ count: number }?] = await this.#sql`
      insert into engine_window_counts as w (name, subject, window_start, count, expires_at)
      values (${name}, ${subject}, ${windowStart}, 1, ${expiresAt})
      on conflict (name, subject, window_start) do update set count = w.count + 1
        where w.count < ${limit}
      returning count`;
    if (!row) return { allowed: false, limit, remaining: 0, resetAt };
    return { allowed: true, limit, remaining: Math.max(0, limit - row.count), resetAt };
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

  /** Every hit is written when counted: nothing to flush. */
  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

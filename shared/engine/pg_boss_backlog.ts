import type { Sql } from "../db.ts";
import { DEFAULTS } from "./pg_boss_queue.ts";

/** Where the pg-boss queue is kept (PgBossQueueOptions). */
export interface PgBossPlace {
  schema?: string;
  queue?: string;
}

/**
 * The jobs of the pg-boss queue that are running, on any consumer, or waiting and due within
 * `withinMs`: what a drain still has to see done. Read from pg-boss's job table, on pg-boss's clock
 * (`job_now()`), as pg-boss itself decides what is due. A running job counts until it is settled, so
 * one fetched but not yet handed to its handler is not missed.
 */
export async function pgBossBacklog(sql: Sql, withinMs: number, place: PgBossPlace = {}): Promise<number> {
  const schema = sql(place.schema ?? DEFAULTS.schema);
  const [row]: [{ n: number }?] = await sql`
    select count(*)::int as n from ${schema}.job
    where name = ${place.queue ?? DEFAULTS.queue}
      and (state = 'active'
        or (state in ('created', 'retry') and start_after <= ${schema}.job_now() + ${withinMs} * interval '1 millisecond'))
  `;
  return row?.n ?? 0;
}

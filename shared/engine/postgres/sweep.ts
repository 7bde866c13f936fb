import type { Sql } from "../../db.ts";

/** Deletes the hot-state rows past their expiry; answers how many. */
export async function sweepExpired(sql: Sql): Promise<number> {
  // Each table on its own: a statement per table keeps every delete on its expiry index.
  const deleted = await Promise.all([
    sql`delete from engine_window_counts where expires_at <= now()`,
    sql`delete from engine_sliding_windows where expires_at <= now()`,
    sql`delete from engine_idempotency where expires_at <= now()`,
    sql`delete from engine_records where expires_at <= now()`,
    sql`delete from engine_send_counts where expires_at <= now()`,
    sql`delete from engine_send_batches where expires_at <= now()`,
    sql`delete from engine_send_given_up where expires_at <= now()`,
  ]);
  return deleted.reduce((sum, result) => sum + result.count, 0);
}

import type postgres from "postgres";
import type { Db } from "pg-boss";

/** What pg-boss's statements run on: the pool or a transaction. */
type Runner = postgres.Sql | postgres.TransactionSql;

/** pg-boss runs its install, migration and maintenance as one `BEGIN; …; COMMIT;` script. */
const STARTS_TRANSACTION = /^\s*BEGIN\b/i;

/**
 * pg-boss's database adapter over postgres.js, so the queue shares the service's pool and driver
 * (one data-access path) and a job can be written inside the caller's `sql.begin` transaction.
 * pg-boss builds its own SQL text with `$n` parameters; `unsafe` is the postgres.js call for that.
 * Shaped after pg-boss's own adapter for Bun's SQL client, whose API is postgres.js's.
 */
export function postgresJsDb(sql: postgres.Sql): Db {
  return {
    async executeSql(text, values) {
      // A script that opens a transaction needs one connection throughout: a reserved one.
      if (!STARTS_TRANSACTION.test(text)) return await run(sql, text, values);
      const reserved = await sql.reserve();
      try {
        return await run(reserved, text, values);
      } finally {
        reserved.release();
      }
    },
    // postgres.js holds LISTEN on a connection of its own and calls `onlisten` on every
    // (re)connect, which is when pg-boss fetches what it may have missed while disconnected.
    async listen(channel: string, onNotification: (payload: string) => void, onReconnect: () => void) {
      const { unlisten } = await sql.listen(channel, onNotification, onReconnect);
      return { close: unlisten };
    },
  };
}

/** pg-boss's adapter for statements that must run inside `tx` (an enqueue in a unit of work). */
export function transactionDb(tx: postgres.TransactionSql): Db {
  return { executeSql: (text, values) => run(tx, text, values) };
}

async function run(on: Runner, text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> {
  // Without values postgres.js uses the simple protocol, which takes multi-statement scripts and
  // answers with one array of rows a statement: pg-boss wants the rows of every statement (a claim
  // made before the script's COMMIT), as node-postgres gives them.
  const result = values?.length
    ? await on.unsafe(text, values as postgres.ParameterOrJSON<never>[])
    : await on.unsafe(text);
  const rows = result.some(Array.isArray) ? result.flat() : result;
  return { rows: rows as unknown as Record<string, unknown>[] };
}

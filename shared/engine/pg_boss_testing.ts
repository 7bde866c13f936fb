import postgres from "postgres";
import { postgresAtomically } from "./postgres/unit.ts";
import { PgBossQueue, type PgBossQueueOptions } from "./pg_boss_queue.ts";
import type { ContractJob, QueueFixture } from "./queue_contract.ts";

/** The server the pg-boss tests run on; they are skipped without one (PGlite has no second connection). */
export const DATABASE_URL = Deno.env.get("DATABASE_URL");

/** The poll the tests run the queue with (s). */
export const TEST_POLL_SECONDS = 0.5;

/** The contract's fixture, with the pool and the schema its queues are kept in, plus queues opened with other options (`openWith`). */
export type PgBossFixture = QueueFixture & {
  schema: string;
  sql: postgres.Sql;
  openWith(queue: string, options: PgBossQueueOptions): Promise<PgBossQueue<ContractJob>>;
};

let fixture: Promise<PgBossFixture> | undefined;

/** One pool and one fresh pg-boss schema per test process; queues in it are opened per test. */
export function pgBossFixture(): Promise<PgBossFixture> {
  fixture ??= (() => {
    const sql = postgres(DATABASE_URL!, { max: 10, onnotice: () => {} });
    const schema = `pgboss_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    return Promise.resolve({
      atomically: (work) => postgresAtomically(sql, work),
      schema,
      sql,
      pollMs: TEST_POLL_SECONDS * 1_000,
      open: (queue: string) => PgBossQueue.start<ContractJob>(sql, testQueueOptions(schema, queue)),
      openWith: (queue, options) =>
        PgBossQueue.start<ContractJob>(sql, { ...testQueueOptions(schema, queue), ...options }),
    });
  })();
  return fixture;
}

/** How the tests (and their child consumers) start a queue. */
export function testQueueOptions(schema: string, queue: string): PgBossQueueOptions {
  return { schema, queue, pollSeconds: TEST_POLL_SECONDS, superviseSeconds: 1 };
}

/** A test on the server: skipped, saying why, when DATABASE_URL is not set. */
export function serverTest(name: string, fn: () => Promise<void>): void {
  Deno.test({
    name: DATABASE_URL ? name : `${name} (skipped: set DATABASE_URL to a PostgreSQL server)`,
    ignore: !DATABASE_URL,
    fn,
    // The pool and pg-boss's timers outlive one test.
    sanitizeOps: false,
    sanitizeResources: false,
  });
}

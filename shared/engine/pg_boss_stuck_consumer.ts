/**
 * A consumer that takes jobs and never finishes them, for the test that SIGKILLs it mid-job:
 * `deno run -A pg_boss_stuck_consumer.ts <schema> <queue> [retry limit]` with DATABASE_URL set.
 * Prints `started <job id>` for each job it takes.
 */
import postgres from "postgres";
import { PgBossQueue } from "./pg_boss_queue.ts";
import { testQueueOptions } from "./pg_boss_testing.ts";
import type { ContractJob } from "./queue_contract.ts";

const [schema, queue, retryLimit] = Deno.args;
const sql = postgres(Deno.env.get("DATABASE_URL")!, { max: 4, onnotice: () => {} });
const q = await PgBossQueue.start<ContractJob>(sql, {
  ...testQueueOptions(schema, queue),
  ...(retryLimit === undefined ? {} : { retryLimit: Number(retryLimit) }),
});
await q.listen(async (job) => {
  console.log(`started ${job.id}`);
  await new Promise(() => {});
});
console.log("listening");

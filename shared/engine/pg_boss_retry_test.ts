import assert from "node:assert/strict";
import { PG_BOSS_JOB_RETRY } from "../backoff.ts";
import { pgBossFixture, serverTest } from "./pg_boss_testing.ts";
import { type ContractJob, queueName, randomJob } from "./queue_contract.ts";

serverTest("pg-boss queue: its jobs retry on PG_BOSS_JOB_RETRY, the queue's schedule as pg-boss takes it", async () => {
  const { open, schema, sql } = await pgBossFixture();
  const name = queueName();
  const q = await open(name);
  try {
    const job: ContractJob = randomJob();
    await q.enqueue(job);
    const [row]: [{ retry_limit: number; retry_delay: number; retry_backoff: boolean; retry_delay_max: number }?] =
      await sql`
        select retry_limit, retry_delay, retry_backoff, retry_delay_max from ${sql(schema)}.job
        where name = ${name} and data->>'id' = ${job.id}
      `;
    assert.deepEqual(
      row && {
        retryLimit: row.retry_limit,
        retryDelay: row.retry_delay,
        retryBackoff: row.retry_backoff,
        retryDelayMax: row.retry_delay_max,
      },
      PG_BOSS_JOB_RETRY,
    );
  } finally {
    await q.stop();
  }
});

import assert from "node:assert/strict";
import { parseConfig } from "../shared/config.ts";
import { pgBossBacklog } from "../shared/engine/pg_boss_backlog.ts";
import { pgBossFixture, serverTest } from "../shared/engine/pg_boss_testing.ts";
import type { JobQueue } from "../shared/engine/queue.ts";
import { type ContractJob, queueName, randomJob, runLog } from "../shared/engine/queue_contract.ts";
import { DRAIN_CRON_NAME, DRAIN_CRON_SCHEDULE, drainCronWanted, drainQueue, registerDrainCron } from "./drain.ts";

/** A pg-boss queue nobody consumes yet, and the drain target of a consumer that would run `handler`. */
async function idleQueue(handler: (job: ContractJob) => Promise<void>) {
  const { open, schema, sql } = await pgBossFixture();
  const queue = queueName();
  const q: JobQueue<ContractJob> = await open(queue);
  let consuming = false;
  const target = {
    consume() {
      if (!consuming) void q.listen(handler);
      consuming = true;
    },
    backlog: (withinMs: number) => pgBossBacklog(sql, withinMs, { schema, queue }),
  };
  return { q, target };
}

serverTest("drainQueue() runs the jobs enqueued while no consumer ran, and returns once none is due", async () => {
  const runs = runLog();
  const { q, target } = await idleQueue(runs.handler);
  try {
    const jobs = [randomJob(), randomJob(), randomJob()];
    for (const job of jobs) await q.enqueue(job);
    const tomorrow = randomJob();
    await q.enqueue(tomorrow, { delayMs: 86_400_000 });
    assert.equal(await target.backlog(0), 3);

    assert.equal(await drainQueue(target, { budgetMs: 30_000 }), "idle");
    assert.deepEqual(jobs.map((job) => runs.count(job.id)), [1, 1, 1]);
    // A job due after the drain's budget does not hold it, and is left for a later drain.
    assert.equal(runs.count(tomorrow.id), 0);
    assert.equal(await target.backlog(0), 0);
  } finally {
    await q.stop();
  }
});

serverTest("drainQueue() waits for a job that falls due within its budget, and runs it", async () => {
  const runs = runLog();
  const { q, target } = await idleQueue(runs.handler);
  try {
    const soon = randomJob();
    await q.enqueue(soon, { delayMs: 1_500 });
    assert.equal(await target.backlog(0), 0);
    assert.equal(await drainQueue(target, { budgetMs: 30_000 }), "idle");
    assert.equal(runs.count(soon.id), 1);
  } finally {
    await q.stop();
  }
});

serverTest("drainQueue() stops at its budget while a job still runs, and the job goes on", async () => {
  const release = Promise.withResolvers<void>();
  const runs = runLog();
  const { q, target } = await idleQueue(async (job) => {
    await runs.handler(job);
    await release.promise;
  });
  try {
    const stuck = randomJob();
    await q.enqueue(stuck);
    assert.equal(await drainQueue(target, { budgetMs: 2_000, checkEveryMs: 200 }), "budget");
    assert.equal(runs.count(stuck.id), 1);
    assert.equal(await target.backlog(0), 1, "the job is still running");
    release.resolve();
  } finally {
    release.resolve();
    await q.stop();
  }
});

/** A configuration from `env` (ENGINE=postgres on a server unless told otherwise). */
function config(env: Record<string, string>) {
  return parseConfig({ ENGINE: "postgres", DATABASE_URL: "postgres://db/app", ...env });
}

Deno.test("drainCronWanted(): with ENGINE=postgres on Deno Deploy unless turned off, elsewhere when turned on", () => {
  assert.equal(drainCronWanted(config({ DENO_DEPLOYMENT_ID: "abc123" })), true);
  assert.equal(drainCronWanted(config({ DENO_DEPLOYMENT_ID: "abc123", QUEUE_DRAIN_CRON: "0" })), false);
  assert.equal(drainCronWanted(config({})), false);
  assert.equal(drainCronWanted(config({ QUEUE_DRAIN_CRON: "1" })), true);
  assert.equal(drainCronWanted(parseConfig({ DENO_DEPLOYMENT_ID: "abc123" })), false, "ENGINE=kv");
});

Deno.test("parseConfig: QUEUE_DRAIN_CRON=1 with ENGINE=kv stops the start, naming it", () => {
  assert.throws(() => parseConfig({ QUEUE_DRAIN_CRON: "1" }), /QUEUE_DRAIN_CRON: .*needs ENGINE=postgres/);
});

/** Whether a cron named DRAIN_CRON_NAME is registered in this process (Deno.cron refuses a second one). */
function drainCronTaken(): boolean {
  const probe = new AbortController();
  try {
    Deno.cron(DRAIN_CRON_NAME, DRAIN_CRON_SCHEDULE, { signal: probe.signal }, () => {});
    return false;
  } catch (err) {
    if (/already exists/.test(String(err))) return true;
    throw err;
  } finally {
    probe.abort();
  }
}

Deno.test("registerDrainCron() registers the Deno.cron only when it is wanted", () => {
  const never = () => Promise.reject(new Error("not run in this test"));
  const cases: [Record<string, string>, boolean][] = [
    [{}, false],
    [{ DENO_DEPLOYMENT_ID: "abc123", QUEUE_DRAIN_CRON: "0" }, false],
    [{ DENO_DEPLOYMENT_ID: "abc123" }, true],
    [{ QUEUE_DRAIN_CRON: "1" }, true],
  ];
  for (const [env, wanted] of cases) {
    const registration = new AbortController();
    try {
      assert.equal(registerDrainCron(config(env), never, { signal: registration.signal }), wanted);
      assert.equal(drainCronTaken(), wanted, JSON.stringify(env));
    } finally {
      registration.abort();
    }
  }
});

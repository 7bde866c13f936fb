import { strict as assert } from "node:assert";
import { pgBossFixture, serverTest } from "./pg_boss_testing.ts";
import type { JobQueue } from "./queue.ts";
import { type ContractJob, delay, queueContract, queueName, randomJob, runLog } from "./queue_contract.ts";

queueContract("pg-boss", pgBossFixture, serverTest);

serverTest("pg-boss queue: a job whose consumer is killed mid-job runs on another consumer", async () => {
  const { open, schema } = await pgBossFixture();
  const name = queueName();
  const stuck = await stuckConsumer(schema, name);
  const job = randomJob();
  let survivor: JobQueue<ContractJob> | undefined;
  try {
    const producer = await open(name);
    await producer.enqueue(job);
    assert.equal(await stuck.next(), `started ${job.id}`);
    await stuck.kill();
    const killed = Date.now();
    await producer.stop();
    survivor = await open(name);
    const runs = runLog();
    await survivor.listen(runs.handler);
    const started = await runs.until(job.id, 30_000);
    // Lost after heartbeatSeconds (10) without a heartbeat, found by the next monitor pass, retried after ~1 s.
    assert.ok(started - killed < 20_000, `ran again ${started - killed} ms after the kill`);
  } finally {
    await stuck.kill();
    await survivor?.stop();
  }
});

serverTest("pg-boss queue: a job failing on its last try marks its trigger given up", async () => {
  const { openWith } = await pgBossFixture();
  const givenUp = givenUpLog();
  const q = await openWith(queueName(), { retryLimit: 0, onGivenUp: givenUp.record });
  try {
    await q.listen(() => Promise.reject(new Error("the provider refused it")));
    await q.enqueue(randomJob(), { forTrigger: "trigger-refused" });
    await q.enqueue(randomJob());
    assert.equal(await givenUp.next(20_000), "trigger-refused");
    // The job with no trigger is given up too, and records nothing.
    await delay(2_000);
    assert.deepEqual(givenUp.triggers, ["trigger-refused"]);
  } finally {
    await q.stop();
  }
});

serverTest(
  "pg-boss queue: a job whose consumer is killed on its last try is failed by pg-boss and marks its trigger given up",
  async () => {
    const { openWith, schema } = await pgBossFixture();
    const name = queueName();
    const stuck = await stuckConsumer(schema, name, 0);
    const givenUp = givenUpLog();
    const job = randomJob();
    let survivor: JobQueue<ContractJob> | undefined;
    try {
      survivor = await openWith(name, { retryLimit: 0, onGivenUp: givenUp.record });
      await survivor.enqueue(job, { forTrigger: "trigger-of-the-killed" });
      assert.equal(await stuck.next(), `started ${job.id}`);
      await stuck.kill();
      const runs = runLog();
      await survivor.listen(runs.handler);
      // No retry left: pg-boss's monitor fails it once its heartbeat is lost (10 s), without our handler.
      assert.equal(await givenUp.next(30_000), "trigger-of-the-killed");
      assert.equal(runs.count(job.id), 0);
    } finally {
      await stuck.kill();
      await survivor?.stop();
    }
  },
);

/** The triggers onGivenUp was called with, in order. */
function givenUpLog() {
  const triggers: string[] = [];
  return {
    triggers,
    record: (triggerId: string) => {
      triggers.push(triggerId);
      return Promise.resolve();
    },
    /** The next trigger recorded (waits up to `timeoutMs`). */
    async next(timeoutMs: number): Promise<string> {
      const seen = triggers.length;
      const deadline = Date.now() + timeoutMs;
      while (triggers.length === seen) {
        if (Date.now() > deadline) throw new Error(`Nothing was given up within ${timeoutMs} ms`);
        await delay(100);
      }
      return triggers[seen];
    },
  };
}

/** A child process consuming queue `name` that takes jobs and never finishes them (pg_boss_stuck_consumer.ts). */
async function stuckConsumer(schema: string, name: string, retryLimit?: number) {
  const args = [new URL("./pg_boss_stuck_consumer.ts", import.meta.url).pathname, schema, name];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...args, ...(retryLimit === undefined ? [] : [String(retryLimit)])],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = lineReader(child.stdout);
  assert.equal(await reader.next(), "listening");
  return {
    next: () => reader.next(),
    /** SIGKILL (nothing of its shutdown runs); again is harmless. */
    async kill(): Promise<void> {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
    },
  };
}

/** The lines of `stream`, one per `next()`. */
function lineReader(stream: ReadableStream<Uint8Array>) {
  const chunks = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  return {
    async next(): Promise<string | undefined> {
      while (!buffered.includes("\n")) {
        const { value, done } = await chunks.read();
        if (done) return undefined;
        buffered += value;
      }
      const end = buffered.indexOf("\n");
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      return line;
    },
  };
}

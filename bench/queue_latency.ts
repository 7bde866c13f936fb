/**
 * The pg-boss job queue measured on a PostgreSQL server (not part of `deno task bench`):
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test deno run -A bench/queue_latency.ts
 *
 * 1. Idle start latency: jobs enqueued one at a time, 0–100 ms apart, by a producer replica; the time
 *    from the enqueue call to the handler's start on a consumer replica (its own pool), p50/p99/max,
 *    with LISTEN/NOTIFY and with polling alone.
 * 2. Delay lateness: jobs delayed 1–3 s, all waiting at once; start minus (enqueue call + delay).
 * 3. Throughput: batch jobs (`--batch` sends each, shaped like a `send-group` job) enqueued by
 *    `--producers` concurrent callers while 1 and then 2 consumer replicas complete them; jobs/s and
 *    sends/s from the first enqueue to the last completion, WAL bytes per job (pg_current_wal_lsn)
 *    and CPU seconds per 1,000 jobs of the Postgres processes (from /proc: the whole server, so other
 *    work on it counts) and of this process.
 *
 * Options: --jobs=500 (latency jobs), --delayed=200, --throughput=3000 (batch jobs a run),
 * --batch=100, --producers=8, --only=latency|throughput (one half). Each run uses a fresh pg-boss schema, dropped at the end.
 */
import postgres from "postgres";
import { parseArgs } from "node:util";
import { PgBossQueue, type PgBossQueueOptions } from "../shared/engine/pg_boss_queue.ts";
import { percentile } from "./percentile.ts";
import { cpuSeconds } from "./server.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    jobs: { type: "string", default: "500" },
    delayed: { type: "string", default: "200" },
    throughput: { type: "string", default: "3000" },
    batch: { type: "string", default: "100" },
    producers: { type: "string", default: "8" },
    only: { type: "string", default: "" },
  },
});
const URL = Deno.env.get("DATABASE_URL");
if (!URL) throw new Error("Cannot measure the queue: set DATABASE_URL to a PostgreSQL server");

interface BenchJob {
  n: number;
  at: number;
  due?: number;
  sends?: unknown[];
}

const schema = `pgboss_bench_${crypto.randomUUID().slice(0, 8)}`;
/** The bench's own pool (floors, WAL position); each replica has another. */
const admin = postgres(URL, { max: 10, onnotice: () => {} });
const pools: postgres.Sql[] = [admin];

/** A replica: its own pool and its own pg-boss instance on the shared schema. */
async function replica(queue: string, options: PgBossQueueOptions = {}): Promise<PgBossQueue<BenchJob>> {
  const sql = postgres(URL!, { max: 10, onnotice: () => {} });
  pools.push(sql);
  return await PgBossQueue.start<BenchJob>(sql, { schema, queue, ...options });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (ms: number) => ms.toFixed(1);

function summary(samples: number[]): string {
  const sorted = Float64Array.from(samples).sort();
  return `p50 ${fmt(percentile(sorted, 50))} ms, p99 ${fmt(percentile(sorted, 99))} ms, max ${
    fmt(sorted[sorted.length - 1])
  } ms (n=${sorted.length})`;
}

/** Runs `count` jobs through a fresh queue; `handlerSample` turns each job into a sample (ms). */
async function collect(
  count: number,
  options: PgBossQueueOptions,
  enqueueAll: (producer: PgBossQueue<BenchJob>) => Promise<void>,
  handlerSample: (job: BenchJob, now: number) => number,
): Promise<number[]> {
  const queue = `q_${crypto.randomUUID().slice(0, 8)}`;
  const producer = await replica(queue, options);
  const consumer = await replica(queue, options);
  const samples: number[] = [];
  let done: () => void;
  const finished = new Promise<void>((resolve) => done = resolve);
  await consumer.listen((job) => {
    samples.push(handlerSample(job, Date.now()));
    if (samples.length === count) done();
    return Promise.resolve();
  });
  await delay(1_000);
  await enqueueAll(producer);
  await finished;
  await Promise.all([producer.stop(), consumer.stop()]);
  return samples;
}

async function idleLatency(notify: boolean): Promise<string> {
  const count = Number(args.jobs);
  // When each enqueue call returned (its commit acknowledged) and each job started, to tell a slow
  // commit from a late wake-up.
  const returned: number[] = [];
  const started: number[] = [];
  const samples = await collect(count, { notify }, async (producer) => {
    for (let n = 0; n < count; n++) {
      await producer.enqueue({ n, at: Date.now() });
      returned[n] = Date.now();
      await delay(Math.random() * 100);
    }
  }, (job, now) => (started[job.n] = now) - job.at);
  const afterCommit = started.map((at, n) => at - returned[n]);
  return `${summary(samples)}; from the commit's acknowledgement: ${summary(afterCommit)}`;
}

async function delayLateness(): Promise<string> {
  const count = Number(args.delayed);
  // One at a time, so that the enqueue call's time is the insert's (not a wait for a connection);
  // the delays overlap, so the jobs are due while many others wait.
  const samples = await collect(count, {}, async (producer) => {
    for (let n = 0; n < count; n++) {
      const delayMs = 1_000 + Math.random() * 2_000;
      const at = Date.now();
      await producer.enqueue({ n, at, due: at + delayMs }, { delayMs });
    }
  }, (job, now) => now - job.due!);
  return summary(samples);
}

/** The floor under the queue's wake-up: a committed pg_notify to a postgres.js listener on another pool. */
async function notifyFloor(): Promise<string> {
  const count = Number(args.jobs);
  const [listener, sender] = [postgres(URL!, { max: 1, onnotice: () => {} }), postgres(URL!, { max: 1 })];
  pools.push(listener, sender);
  const samples: number[] = [];
  let heard: () => void = () => {};
  const { unlisten } = await listener.listen("bench_floor", (payload) => {
    samples.push(Date.now() - Number(payload));
    heard();
  });
  for (let n = 0; n < count; n++) {
    const wait = new Promise<void>((resolve) => heard = resolve);
    await sender`select pg_notify('bench_floor', ${String(Date.now())})`;
    await wait;
    await delay(Math.random() * 20);
  }
  await unlisten();
  return summary(samples);
}

/** The floor under an enqueue: one single-row INSERT of the same job committed, by `--producers` concurrent callers. */
async function insertFloor(): Promise<string> {
  const sql = admin;
  const table = sql(`${schema}.bench_floor`);
  await sql`create table ${table} (id bigserial primary key, data jsonb)`;
  const body = sendGroup(0, Number(args.batch)) as unknown as postgres.JSONValue;
  let next = 0;
  const count = 1_000;
  const started = performance.now();
  await Promise.all(Array.from({ length: Number(args.producers) }, async () => {
    while (next++ < count) await sql`insert into ${table} (data) values (${sql.json(body)})`;
  }));
  return `${(count / ((performance.now() - started) / 1_000)).toFixed(0)} commits/s`;
}

/** A `send-group`-shaped job: `batch` direct SMS sends. */
function sendGroup(n: number, batch: number): BenchJob {
  const sends = Array.from({ length: batch }, (_, i) => ({
    trigger_id: crypto.randomUUID(),
    team_id: "7d3c2a70-1f8e-4a57-9a43-5b7f1e2d9c11",
    channel: "sms",
    to: `+1555${String(1_000_000 + i).slice(1)}`,
    body: "Your order 4711 has shipped and will arrive on Thursday.",
    accepted_at: Date.now(),
  }));
  return { n, at: Date.now(), sends };
}

async function serverCpuSeconds(): Promise<number> {
  let total = 0;
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const comm = await Deno.readTextFile(`/proc/${entry.name}/comm`).catch(() => "");
    if (comm.trim() === "postgres") total += await cpuSeconds(Number(entry.name));
  }
  return total;
}

async function walLsn(sql: postgres.Sql): Promise<string> {
  const [row] = await sql`select pg_current_wal_lsn()::text as lsn`;
  return row.lsn;
}

async function throughput(consumers: number): Promise<string> {
  const count = Number(args.throughput);
  const batch = Number(args.batch);
  const queue = `q_${crypto.randomUUID().slice(0, 8)}`;
  const producer = await replica(queue);
  const workers = await Promise.all(Array.from({ length: consumers }, () => replica(queue)));
  let completed = 0;
  let done: () => void;
  const finished = new Promise<void>((resolve) => done = resolve);
  for (const w of workers) {
    await w.listen(() => {
      if (++completed === count) done();
      return Promise.resolve();
    });
  }
  const jobs = Array.from({ length: count }, (_, n) => sendGroup(n, batch));
  const sql = admin;
  await delay(1_000);
  const [lsn0, pg0, self0] = [await walLsn(sql), await serverCpuSeconds(), await cpuSeconds(Deno.pid)];
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: Number(args.producers) }, async () => {
    while (next < count) await producer.enqueue(jobs[next++]);
  }));
  const enqueuedMs = performance.now() - started;
  await finished;
  const seconds = (performance.now() - started) / 1_000;
  const [lsn1, pg1, self1] = [await walLsn(sql), await serverCpuSeconds(), await cpuSeconds(Deno.pid)];
  const [{ bytes }] = await sql`select pg_wal_lsn_diff(${lsn1}, ${lsn0})::float8 as bytes`;
  await Promise.all([producer.stop(), ...workers.map((w) => w.stop())]);
  const perThousand = (s: number) => ((s / count) * 1_000).toFixed(2);
  return `${(count / seconds).toFixed(0)} jobs/s = ${((count * batch) / seconds).toFixed(0)} sends/s ` +
    `(enqueue alone ${(count / (enqueuedMs / 1_000)).toFixed(0)} jobs/s); WAL ${(bytes / count).toFixed(0)} B/job; ` +
    `CPU s per 1,000 jobs: postgres ${perThousand(pg1 - pg0)}, bench process ${perThousand(self1 - self0)}`;
}

try {
  console.log(`pg-boss queue on ${new globalThis.URL(URL).host}, schema ${schema}`);
  const want = (half: string) => !args.only || args.only === half;
  if (want("latency")) {
    console.log(`committed pg_notify to a listener (floor):      ${await notifyFloor()}`);
    console.log(`idle start latency, LISTEN/NOTIFY + 0.5 s poll: ${await idleLatency(true)}`);
    console.log(`idle start latency, 0.5 s poll alone:          ${await idleLatency(false)}`);
    console.log(`delayed job lateness (1–3 s delays):            ${await delayLateness()}`);
  }
  if (want("throughput")) {
    console.log(`plain INSERT of a ${args.batch}-send job, ${args.producers} callers (floor): ${await insertFloor()}`);
    for (const consumers of [1, 2]) {
      const figures = await throughput(consumers);
      console.log(
        `throughput, ${args.batch} sends/job, ${args.producers} producers, ${consumers} consumer(s): ${figures}`,
      );
    }
  }
} finally {
  await admin`drop schema if exists ${admin(schema)} cascade`;
  await Promise.all(pools.map((p) => p.end({ timeout: 5 })));
}

import { strict as assert } from "node:assert";
import type { JobQueue, UnitOfWork } from "./queue.ts";

/** The job the contract enqueues: an id to count its runs by. */
export interface ContractJob {
  id: string;
}

/** What the contract runs against: units of work on the engine, and queues on it. */
export interface QueueFixture {
  /** Runs `work` as one unit of work of the engine (HotState.atomically). */
  atomically(work: (unitOfWork: UnitOfWork) => Promise<void>): Promise<boolean>;
  /** A new producer and consumer of the queue named `name` (two calls: two replicas of it). */
  open(name: string): Promise<JobQueue<ContractJob>>;
  /** The most a job may start after it is due on an idle queue (the engine's poll). */
  pollMs: number;
}

/**
 * The behaviour every engine's queue owes the roles, as named tests. `fixture` is awaited once per
 * test; `register` is `Deno.test` or a wrapper that skips.
 */
export function queueContract(
  engine: string,
  fixture: () => Promise<QueueFixture>,
  register: (name: string, fn: () => Promise<void>) => void,
): void {
  register(`${engine} queue: a job enqueued in a transaction that rolls back never runs`, async () => {
    const { atomically, open, pollMs } = await fixture();
    const q = await open(queueName());
    const runs = runLog();
    try {
      await q.listen(runs.handler);
      const rolledBack = randomJob();
      await assert.rejects(
        atomically(async (unit) => {
          await q.enqueue(rolledBack, {}, unit);
          throw new Error("the state change failed");
        }),
        /the state change failed/,
      );
      const committed = randomJob();
      await q.enqueue(committed);
      await runs.until(committed.id, START_WITHIN_MS);
      await delay(2 * pollMs);
      assert.equal(runs.count(rolledBack.id), 0);
    } finally {
      await q.stop();
    }
  });

  register(`${engine} queue: a job enqueued in a committed transaction runs once`, async () => {
    const { atomically, open, pollMs } = await fixture();
    const q = await open(queueName());
    const runs = runLog();
    try {
      await q.listen(runs.handler);
      const job = randomJob();
      assert.equal(await atomically((unit) => q.enqueue(job, {}, unit)), true);
      await runs.until(job.id, START_WITHIN_MS);
      await delay(2 * pollMs);
      assert.equal(runs.count(job.id), 1);
    } finally {
      await q.stop();
    }
  });

  register(`${engine} queue: a delayed job runs no earlier than its delay`, async () => {
    const { open } = await fixture();
    const q = await open(queueName());
    const runs = runLog();
    try {
      await q.listen(runs.handler);
      const delayMs = 1_500;
      const job = randomJob();
      const enqueued = Date.now();
      await q.enqueue(job, { delayMs });
      const started = await runs.until(job.id, delayMs + START_WITHIN_MS);
      assert.ok(started - enqueued >= delayMs, `started ${started - enqueued} ms after enqueue, before ${delayMs} ms`);
    } finally {
      await q.stop();
    }
  });

  register(`${engine} queue: one dedup key makes one job`, async () => {
    const { open, pollMs } = await fixture();
    const q = await open(queueName());
    const runs = runLog();
    try {
      const key = `key-${crypto.randomUUID()}`;
      const first = randomJob();
      await Promise.all([q.enqueue(first, { dedupKey: key }), q.enqueue(randomJob(), { dedupKey: key })]);
      await q.enqueue(randomJob(), { dedupKey: key });
      await q.listen(runs.handler);
      const other = randomJob();
      await q.enqueue(other, { dedupKey: `key-${crypto.randomUUID()}` });
      await runs.until(other.id, START_WITHIN_MS);
      await delay(2 * pollMs);
      assert.equal(runs.total(), 2, `ran ${runs.total()} jobs: ${JSON.stringify(runs.ids())}`);
    } finally {
      await q.stop();
    }
  });

  register(`${engine} queue: two consumers never run the same job, and every job runs`, async () => {
    const { open, pollMs } = await fixture();
    const name = queueName();
    const [a, b] = await Promise.all([open(name), open(name)]);
    const runs = runLog(20);
    const ranOn = new Set<string>();
    try {
      await a.listen((job) => (ranOn.add("a"), runs.handler(job)));
      await b.listen((job) => (ranOn.add("b"), runs.handler(job)));
      const jobs = Array.from({ length: 60 }, randomJob);
      for (const job of jobs) await a.enqueue(job);
      for (const job of jobs) await runs.until(job.id, START_WITHIN_MS);
      await delay(2 * pollMs);
      for (const job of jobs) assert.equal(runs.count(job.id), 1, `job ${job.id} ran ${runs.count(job.id)} times`);
      assert.equal(runs.overlaps(), 0);
      assert.deepEqual([...ranOn].sort(), ["a", "b"], "both consumers took jobs");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
}

/**
 * The longest a test waits for a job to start: far over the engine's poll, so that a loaded machine
 * (the suite runs in parallel) does not fail a test that only waits for a start.
 */
const START_WITHIN_MS = 15_000;

/** A queue name no other test uses. */
export function queueName(): string {
  return `contract_${crypto.randomUUID().slice(0, 8)}`;
}

/** A job with a fresh id. */
export function randomJob(): ContractJob {
  return { id: crypto.randomUUID() };
}

/** Records each run of each job: when it started, how many times, and runs of one job that overlapped. */
export function runLog(runMs = 0) {
  const runs = new Map<string, number[]>();
  const running = new Set<string>();
  let overlaps = 0;
  const waiters = new Set<() => void>();
  return {
    async handler(job: ContractJob): Promise<void> {
      if (running.has(job.id)) overlaps++;
      running.add(job.id);
      runs.set(job.id, [...(runs.get(job.id) ?? []), Date.now()]);
      for (const wake of waiters) wake();
      if (runMs) await delay(runMs);
      running.delete(job.id);
    },
    count: (id: string) => runs.get(id)?.length ?? 0,
    total: () => [...runs.values()].reduce((n, r) => n + r.length, 0),
    ids: () => [...runs.keys()],
    overlaps: () => overlaps,
    /** When job `id` first started (Date.now()); rejects after `timeoutMs` without it. */
    async until(id: string, timeoutMs: number): Promise<number> {
      const deadline = Date.now() + timeoutMs;
      while (!runs.has(id)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`Cannot see job ${id} run: not started within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, left);
          function done() {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          }
          waiters.add(done);
        });
      }
      return runs.get(id)![0];
    },
  };
}

/** Waits `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

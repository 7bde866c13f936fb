import type postgres from "postgres";
import { type Job as BossJob, type JobInsert, type JobResult, type JobWithMetadata, PgBoss } from "pg-boss";
import { PG_BOSS_JOB_RETRY } from "../backoff.ts";
import { Batcher } from "../batcher.ts";
import { log } from "../log.ts";
import { postgresJsDb, transactionDb } from "./pg_boss_db.ts";
import { transactionOf } from "./postgres/unit.ts";
import type { EnqueueOptions, JobHandler, JobQueue, UnitOfWork } from "./queue.ts";

/** How the pg-boss queue is kept and consumed. */
export interface PgBossQueueOptions {
  /** The Postgres schema pg-boss keeps its tables in (created and migrated at start). */
  schema?: string;
  /** The pg-boss queue that carries our jobs (one: the consumer dispatches on the job's `type`). */
  queue?: string;
  /**
   * Wake consumers with LISTEN/NOTIFY when a job is enqueued. Without it a job waits for the next
   * poll; with it polling stays as the floor (delayed jobs, retries, a lost notification).
   */
  notify?: boolean;
  /** How often an idle consumer looks for due jobs (s, at least 0.5): how late a delayed job or a retry may start. */
  pollSeconds?: number;
  /** Fetches one replica runs at once. */
  concurrency?: number;
  /** Jobs one fetch takes (they run concurrently, each settled on its own). */
  batchSize?: number;
  /** A running job whose consumer sent no heartbeat for this long (s, at least 10) is run again elsewhere. */
  heartbeatSeconds?: number;
  /** How often some replica looks for such jobs (s). */
  superviseSeconds?: number;
  /** How many times a failed job is run again, with exponential back-off (PG_BOSS_JOB_RETRY). */
  retryLimit?: number;
  /**
   * Called when pg-boss gives up on a job enqueued `forTrigger` (its last retry failed in our handler,
   * or pg-boss's monitor failed it: heartbeat lost or expired with no retry left), so that its trigger
   * shows failed rather than processing for good (SendState.markGivenUp). At least once per job.
   */
  onGivenUp?: (triggerId: string, jobId: string) => Promise<void>;
}

/** How the queue is kept and consumed unless told otherwise. */
export const DEFAULTS: Required<Omit<PgBossQueueOptions, "onGivenUp">> & Pick<PgBossQueueOptions, "onGivenUp"> = {
  schema: "pgboss",
  queue: "jobs",
  notify: true,
  pollSeconds: 0.5,
  concurrency: 4,
  batchSize: 4,
  heartbeatSeconds: 10,
  superviseSeconds: 2,
  retryLimit: PG_BOSS_JOB_RETRY.retryLimit,
};

/** The most jobs one grouped INSERT carries. */
const MAX_JOBS_PER_INSERT = 100;
/** A job may run this long before it is failed even with heartbeats (s; pg-boss allows 24 h at most). */
const EXPIRE_S = 3_600;
/** Retries of a given-up record that could not be written (the database away): about an hour of back-off. */
const GIVEN_UP_RETRY_LIMIT = 20;

/**
 * The dead letter queue of `queue`: pg-boss copies every job it fails for good into it, whoever failed
 * it. Our handler sees only the failures it throws; a job whose consumer died on its last try is
 * failed by pg-boss's monitor (heartbeat lost, expired) without it, and only this queue tells us.
 */
function givenUpQueue(queue: string): string {
  return `${queue}_given_up`;
}

/** The job queue on pg-boss, over the service's postgres.js pool. */
export class PgBossQueue<J = unknown> implements JobQueue<J> {
  #boss: PgBoss;
  #options: typeof DEFAULTS;
  /**
   * Enqueues outside a unit of work share one INSERT: a commit that notifies takes a lock every
   * other notifying commit waits for, so one commit a job would cap the enqueue rate.
   */
  #inserts: Batcher<JobInsert>;

  private constructor(boss: PgBoss, options: typeof DEFAULTS) {
    this.#boss = boss;
    this.#options = options;
    this.#inserts = new Batcher(async (jobs) => {
      await boss.insert(options.queue, jobs);
    }, { maxWeight: MAX_JOBS_PER_INSERT, retryAlone: true });
  }

  /** Starts pg-boss on `sql` (installing or migrating its schema) and makes sure the queue exists. */
  static async start<J = unknown>(sql: postgres.Sql, options: PgBossQueueOptions = {}): Promise<PgBossQueue<J>> {
    const o = { ...DEFAULTS, ...options };
    const boss = new PgBoss({
      db: postgresJsDb(sql),
      schema: o.schema,
      useListenNotify: o.notify,
      // We schedule with delays, not pg-boss's cron.
      schedule: false,
      // Expiry and heartbeat loss are found by the monitor pass, which needs both timers.
      superviseIntervalSeconds: o.superviseSeconds,
      monitorIntervalSeconds: o.superviseSeconds,
    });
    // Some of pg-boss's errors are plain objects (a failed statement's details), which String() hides.
    boss.on("error", (err) => {
      const error = err instanceof Error ? String(err) : JSON.stringify(err);
      log("warn", "job queue error", { error });
    });
    await boss.start();
    const settings = {
      notify: o.notify,
      heartbeatSeconds: o.heartbeatSeconds,
      expireInSeconds: EXPIRE_S,
      ...PG_BOSS_JOB_RETRY,
      retryLimit: o.retryLimit,
    };
    // The dead letter queue first: a queue's deadLetter must name a queue that exists.
    const givenUp = givenUpQueue(o.queue);
    if (!await boss.getQueue(givenUp)) {
      await boss.createQueue(givenUp, { ...PG_BOSS_JOB_RETRY, retryLimit: GIVEN_UP_RETRY_LIMIT })
        .catch(ignoreIfCreatedMeanwhile);
    }
    // Jobs take the dead letter queue when they are inserted (jobs already waiting keep none).
    const main = { ...settings, deadLetter: givenUp };
    if (await boss.getQueue(o.queue)) await boss.updateQueue(o.queue, main);
    else await boss.createQueue(o.queue, main).catch(ignoreIfCreatedMeanwhile);
    return new PgBossQueue<J>(boss, o);
  }

  async enqueue(job: J, options: EnqueueOptions = {}, unitOfWork?: UnitOfWork): Promise<void> {
    // The trigger rides in the job's data (the job schemas strip what they do not name).
    const data = options.forTrigger === undefined ? job : { ...job, [FOR_TRIGGER]: options.forTrigger };
    const insert: JobInsert = { data: data as object };
    // In seconds, as an interval from the server's clock (pg-boss casts it; fractions are kept).
    if (options.delayMs && options.delayMs > 0) insert.startAfter = String(options.delayMs / 1000);
    // The job's id is its key: the insert skips a row whose id exists (ON CONFLICT DO NOTHING).
    if (options.dedupKey !== undefined) insert.id = await keyId(options.dedupKey);
    if (unitOfWork) {
      await this.#boss.insert(this.#options.queue, [insert], { db: transactionDb(transactionOf(unitOfWork)) });
    } else await this.#inserts.add(insert);
  }

  async listen(handler: JobHandler<J>): Promise<void> {
    const { queue, pollSeconds, concurrency, batchSize } = this.#options;
    await this.#boss.work<J>(
      queue,
      {
        batchSize,
        localConcurrency: concurrency,
        pollingIntervalSeconds: pollSeconds,
        notifyPollingIntervalSeconds: pollSeconds,
        // A full fetch means a backlog: fetch again at once instead of waiting for the poll.
        burstWhenBatchFull: true,
        perJobResults: true,
      },
      (jobs: BossJob<J>[]) => Promise.all(jobs.map((job) => this.#runOne(job, handler))),
    );
    // Every replica consumes the jobs given up; a record that cannot be written is retried by pg-boss.
    await this.#boss.work(
      givenUpQueue(queue),
      { batchSize, pollingIntervalSeconds: pollSeconds, includeMetadata: true },
      async (jobs: JobWithMetadata<Record<string, unknown>>[]) => {
        for (const job of jobs) {
          const triggerId = job.data?.[FOR_TRIGGER];
          const jobId = job.sourceId ?? job.id;
          log("warn", "job given up", { job_id: jobId, trigger_id: triggerId });
          if (typeof triggerId === "string") await this.#options.onGivenUp?.(triggerId, jobId);
        }
      },
    );
  }

  async stop(): Promise<void> {
    await this.#boss.stop({ graceful: true, timeout: STOP_TIMEOUT_MS });
  }

  async #runOne(job: BossJob<J>, handler: JobHandler<J>): Promise<JobResult> {
    try {
      await handler(job.data);
      return { id: job.id, status: "completed" };
    } catch (err) {
      const last = job.retryCount >= this.#options.retryLimit;
      log("warn", last ? "job failed for the last time" : "job failed; it will run again", {
        job_id: job.id,
        error: String(err),
      });
      // Failed for good, pg-boss moves it to the dead letter queue, where listen() records it given up.
      return { id: job.id, status: "failed", output: { message: String(err) } };
    }
  }
}

/** The field of a job's data naming the trigger it works for (EnqueueOptions.forTrigger). */
const FOR_TRIGGER = "for_trigger";

/** How long `stop()` waits for running jobs before it gives up on them (they run again elsewhere). */
const STOP_TIMEOUT_MS = 10_000;

function ignoreIfCreatedMeanwhile(err: unknown): void {
  // Two replicas starting together may both find no queue; the second create then fails.
  if (!/already exists|duplicate key/i.test(String(err))) throw err;
}

/** A job id (a UUID, as pg-boss requires) that is a function of the dedup key. */
export async function keyId(key: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  // Shaped as a version-8 (custom) UUID so that it is a valid one.
  hash[6] = (hash[6] & 0x0f) | 0x80;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = Array.from(hash.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

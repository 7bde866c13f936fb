import type { KvCommitter } from "../../kv.ts";
import { log } from "../../log.ts";
import { JOB_BACKOFF_MS } from "../../backoff.ts";
import { sendKeys } from "../../sending/keys.ts";
import type { EnqueueOptions, JobHandler, JobQueue, UnitOfWork } from "../queue.ts";
import { InflightJournal } from "./inflight.ts";
import { kvUnitOf } from "./unit.ts";

/** How long a dedup key keeps a second enqueue out (the queue keeps no record of a job that ran). */
const DEDUP_KEEP_MS = 24 * 3_600_000;

/** The most weight one job counts for in a group commit (the committer's limit is 1,000 mutations). */
const MAX_WEIGHT = 1_000;

/** How a KV queue is consumed. */
export interface KvQueueOptions {
  /**
   * The KV is a local file, which other processes of this host may open too (not `:memory:`, not
   * Deno Deploy's KV). Its listener then journals the jobs it runs (see inflight.ts) and wakes itself
   * every `tickMs` (see {@linkcode KvQueue.listen}).
   */
  localFile?: boolean;
  /** How often a listener on a local file enqueues a no-op to itself (ms). */
  tickMs?: number;
}

/** The no-op a listener on a local file enqueues to itself; never handed to the handler. */
const TICK = { type: "tick" } as const;

/**
 * The job queue on Deno KV's own queue: `enqueue` with `delay`, redelivery with back-off
 * (JOB_BACKOFF_MS), one listener per database. Plain enqueues share the process's group commit; a
 * dedup key is a marker written with the job, checked absent.
 */
export class KvQueue<J = unknown> implements JobQueue<J> {
  #kv: Deno.Kv;
  #committer: KvCommitter;
  #options: KvQueueOptions;
  #journal: InflightJournal | undefined;
  #tick: ReturnType<typeof setInterval> | undefined;

  constructor(kv: Deno.Kv, committer: KvCommitter, options: KvQueueOptions = {}) {
    this.#kv = kv;
    this.#committer = committer;
    this.#options = options;
  }

  async enqueue(job: J, options: EnqueueOptions = {}, unitOfWork?: UnitOfWork): Promise<void> {
    const enqueueOptions = {
      delay: Math.max(0, options.delayMs ?? 0),
      backoffSchedule: JOB_BACKOFF_MS,
      // What KvSendState.givenUp reads: KV writes it when its retries run out.
      keysIfUndelivered: options.forTrigger === undefined
        ? undefined
        : [sendKeys.undelivered(options.forTrigger, (job as { id?: string }).id ?? crypto.randomUUID())],
    };
    if (options.dedupKey !== undefined) {
      // A unit whose dedup check failed would have to commit without its job, which KV cannot do.
      if (unitOfWork) throw new Error("Cannot enqueue with a dedup key inside a unit of work on Deno KV");
      const marker = ["queue_dedup", options.dedupKey];
      await this.#kv.atomic()
        .check({ key: marker, versionstamp: null })
        .set(marker, true, { expireIn: DEDUP_KEEP_MS })
        .enqueue(job, enqueueOptions)
        .commit();
      return;
    }
    if (unitOfWork) kvUnitOf(unitOfWork).add([], (op) => op.enqueue(job, enqueueOptions));
    else await this.#committer.commit((op) => op.enqueue(job, enqueueOptions), weightOf(job));
  }

  /**
   * Starts the database's one listener. On a local file it also journals each running job, so that
   * another process takes up the jobs of one that crashed within seconds (inflight.ts), and enqueues
   * a no-op to itself every `tickMs`: a listener sees another process's enqueues only when its own
   * queue wakes it (else on Deno KV's 60 s fallback poll).
   */
  listen(handler: JobHandler<J>): Promise<void> {
    const journal = this.#options.localFile ? new InflightJournal(this.#kv) : undefined;
    this.#journal = journal;
    journal?.start();
    if (this.#options.localFile) {
      this.#tick = setInterval(() => {
        this.#kv.enqueue(TICK).catch((err) => log("warn", "queue tick failed", { error: String(err) }));
      }, this.#options.tickMs ?? TICK_MS);
      Deno.unrefTimer(this.#tick);
    }
    const listener = (message: unknown) => {
      if (isTick(message)) return;
      return journal ? journal.track(message, () => handler(message as J)) : handler(message as J);
    };
    // Resolves when the KV database closes; the listener is then gone.
    this.#kv.listenQueue(listener).catch((err) => log("error", "queue listener stopped", { error: String(err) }));
    return Promise.resolve();
  }

  /**
   * Stops the tick and the journal's heartbeat. Deno KV stops delivering only when its database
   * closes, which its owner does; the journal entries of jobs cut off then stay for another process.
   */
  stop(): Promise<void> {
    clearInterval(this.#tick);
    this.#journal?.stop();
    this.#tick = this.#journal = undefined;
    return Promise.resolve();
  }
}

/** How often a listener on a local file wakes itself. */
const TICK_MS = 1_000;

function isTick(message: unknown): boolean {
  return (message as { type?: unknown } | null)?.type === TICK.type;
}

/**
 * The weight of a job in a group commit: one, plus one a KiB (V8 serialises at most 2 bytes a
 * character), so that a group of large jobs (webhook events, step jobs) stays under KV's 800 KiB a
 * commit.
 */
function weightOf(job: unknown): number {
  return Math.min(MAX_WEIGHT, 1 + Math.ceil(JSON.stringify(job).length * 2 / 1024));
}

import type { KvCommitter } from "../../kv.ts";
import { JOB_BACKOFF_MS } from "../../sending/jobs.ts";
import { sendKeys } from "../../sending/keys.ts";
import type { EnqueueOptions, JobHandler, JobQueue, UnitOfWork } from "../queue.ts";
import { kvUnitOf } from "./unit.ts";

/** How long a dedup key keeps a second enqueue out (the queue keeps no record of a job that ran). */
const DEDUP_KEEP_MS = 24 * 3_600_000;

/**
 * The job queue on Deno KV's own queue: `enqueue` with `delay`, redelivery with back-off, one
 * listener per database. Plain enqueues share the process's group commit; a dedup key is a marker
 * written with the job, checked absent.
 */
export class KvQueue<J = unknown> implements JobQueue<J> {
  #kv: Deno.Kv;
  #committer: KvCommitter;

  constructor(kv: Deno.Kv, committer: KvCommitter) {
    this.#kv = kv;
    this.#committer = committer;
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
    else await this.#committer.commit((op) => op.enqueue(job, enqueueOptions));
  }

  listen(handler: JobHandler<J>): Promise<void> {
    // Resolves when the KV database closes; the listener is then gone.
    this.#kv.listenQueue((message) => handler(message as J)).catch(() => {});
    return Promise.resolve();
  }

  stop(): Promise<void> {
    // Deno KV stops delivering only when its database closes, which its owner does.
    return Promise.resolve();
  }
}

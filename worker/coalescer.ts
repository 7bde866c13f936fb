import { Batcher } from "../shared/batcher.ts";
import type { SendGroupJob } from "../shared/sending/jobs.ts";
import { type BurstDeferral, defersBursts, holdDuringBurst } from "../shared/sending/pressure.ts";

/**
 * Direct-send passes run at once. A pass spends most of its time waiting for its providers' answers,
 * so a second one keeps the CPU busy meanwhile; each holds at most SEND_CONCURRENCY messages claimed
 * and unanswered (handoff.ts), so this bounds what a crash of the process can leave uncertain.
 */
export const PASSES_AT_ONCE = 2;

/**
 * Merges `send-group` jobs that arrive together into larger delivery passes. The queue hands the
 * worker every waiting message at once; one pass over 1,000 sends costs about the statements of
 * one pass over 50, so under load the worker keeps up with less work. PASSES_AT_ONCE run at once.
 * Each job's promise settles with the pass that held it (a failed pass fails its jobs, which the
 * queue delivers again).
 *
 * While this process is accepting a burst of sends (`defer`), passes wait (each job at most
 * `maxDelayMs`): on a small machine delivering a send costs several times what accepting it does,
 * so the accept path keeps the CPU and the queue holds the backlog, delivered when the burst ends.
 */
export class GroupCoalescer {
  #passes: Batcher<SendGroupJob>;

  constructor(
    run: (job: SendGroupJob & { attempt: number }) => Promise<void>,
    options: { maxSends?: number; defer?: BurstDeferral } = {},
  ) {
    const d = options.defer;
    this.#passes = new Batcher(
      (jobs) => run({ type: "send-group", id: jobs[0].id, sends: jobs.flatMap((j) => j.sends), attempt: 0 }),
      {
        maxWeight: options.maxSends ?? 1_000,
        concurrency: PASSES_AT_ONCE,
        hold: d && defersBursts(d) ? (arrived) => holdDuringBurst(d, arrived) : undefined,
      },
    );
  }

  /** Delivers the job's sends in the next pass; resolves when that pass is done. */
  add(job: SendGroupJob): Promise<void> {
    return this.#passes.add(job, job.sends.length);
  }
}

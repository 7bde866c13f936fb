import { Batcher } from "../shared/batcher.ts";
import type { SendGroupJob } from "../shared/sending/jobs.ts";
import { type BurstDeferral, defersBursts, holdDuringBurst } from "../shared/sending/pressure.ts";

/**
 * Merges `send-group` jobs that arrive together into larger delivery passes. The queue hands the
 * worker every waiting message at once; one pass over 1,000 sends costs about the statements of
 * one pass over 50, so under load the worker keeps up with less work. Each job's promise settles
 * with the pass that held it (a failed pass fails its jobs, which the queue delivers again).
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
        hold: d && defersBursts(d) ? (arrived) => holdDuringBurst(d, arrived) : undefined,
      },
    );
  }

  /** Delivers the job's sends in the next pass; resolves when that pass is done. */
  add(job: SendGroupJob): Promise<void> {
    return this.#passes.add(job, job.sends.length);
  }
}

import type { SendGroupJob } from "../shared/sending/jobs.ts";

interface Waiting {
  job: SendGroupJob;
  arrived: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** When to hold passes back: while `rate()` exceeds `busyRate`, for at most `maxDeferMs` per job. */
export interface DeferPolicy {
  rate: (now: number) => number;
  busyRate: number;
  maxDeferMs: number;
  now: () => number;
}

/**
 * Merges `send-group` jobs that arrive together into larger delivery passes. The queue hands the
 * worker every waiting message at once; one pass over 1,000 sends costs about the statements of
 * one pass over 50, so under load the worker keeps up with less work. Each job's promise settles
 * with the pass that held it (a failed pass fails its jobs, which the queue delivers again).
 *
 * While this process is accepting a burst of sends (`defer`), passes wait (each job at most
 * `maxDeferMs`): on a small machine delivering a send costs several times what accepting it does,
 * so the accept path keeps the CPU and the queue holds the backlog, delivered when the burst ends.
 */
export class GroupCoalescer {
  #run: (job: SendGroupJob & { attempt: number }) => Promise<void>;
  #max: number;
  #defer?: DeferPolicy;
  #waiting: Waiting[] = [];
  #running = false;

  constructor(
    run: (job: SendGroupJob & { attempt: number }) => Promise<void>,
    options: { maxSends?: number; defer?: DeferPolicy } = {},
  ) {
    this.#run = run;
    this.#max = options.maxSends ?? 1_000;
    this.#defer = options.defer;
  }

  /** Delivers the job's sends in the next pass; resolves when that pass is done. */
  add(job: SendGroupJob): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ job, arrived: this.#defer?.now() ?? 0, resolve, reject });
      if (!this.#running) this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    await Promise.resolve();
    try {
      while (this.#waiting.length > 0) {
        await this.#holdDuringBurst();
        let count = 0;
        let taken = 0;
        while (
          taken < this.#waiting.length && (taken === 0 || count + this.#waiting[taken].job.sends.length <= this.#max)
        ) {
          count += this.#waiting[taken].job.sends.length;
          taken++;
        }
        const pass = this.#waiting.splice(0, taken);
        const merged = {
          type: "send-group" as const,
          id: pass[0].job.id,
          sends: pass.flatMap((w) => w.job.sends),
          attempt: 0,
        };
        try {
          await this.#run(merged);
          for (const w of pass) w.resolve();
        } catch (err) {
          for (const w of pass) w.reject(err);
        }
      }
    } finally {
      this.#running = false;
    }
  }

  async #holdDuringBurst(): Promise<void> {
    const d = this.#defer;
    if (!d || d.busyRate <= 0 || d.maxDeferMs <= 0) return;
    while (d.rate(d.now()) > d.busyRate && d.now() - this.#waiting[0].arrived < d.maxDeferMs) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

import type { UnitOfWork } from "./ports.ts";

export type { UnitOfWork };

/** How one job is enqueued. */
export interface EnqueueOptions {
  /** Runs no earlier than this many ms after the enqueue commits (never early; late by the queue's poll at most). */
  delayMs?: number;
  /**
   * Names the job: enqueueing again with the same key while the queue still holds the job (waiting,
   * running or kept after it ran) makes no second job.
   */
  dedupKey?: string;
  /** The trigger the job works for: once the queue gives up on the job, the trigger shows failed (SendState.givenUp). */
  forTrigger?: string;
}

/** Runs one job; throwing makes the queue run it again later, with back-off. */
export type JobHandler<J> = (job: J) => Promise<void>;

/**
 * The job queue the roles share, whatever engine holds it. A job is data (see worker/jobs.ts);
 * each job runs at least once, so every handler is idempotent.
 */
export interface JobQueue<J = unknown> {
  /**
   * Enqueues `job`. With `unitOfWork` (see HotState.atomically) the job is written with that unit: it
   * runs only if the unit commits.
   */
  enqueue(job: J, options?: EnqueueOptions, unitOfWork?: UnitOfWork): Promise<void>;
  /** Starts consuming: `handler` runs each job, on this replica or another, never two at once. */
  listen(handler: JobHandler<J>): Promise<void>;
  /** Stops consuming and waits for the jobs running here to end. */
  stop(): Promise<void>;
}

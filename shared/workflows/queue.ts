import { JOB_BACKOFF_MS } from "../sending/jobs.ts";
import { sendKeys } from "../sending/keys.ts";
import type { WorkflowStartStoredJob } from "./jobs.ts";

/** Deno KV refuses a queue delay over 30 days: a longer wait is chained (the job re-enqueues itself). */
export const MAX_QUEUE_DELAY_MS = 30 * 24 * 3_600_000;

/** The queue delay of a job due at `due`: never negative, never over the queue's maximum. */
export function queueDelay(due: number, now: number): number {
  return Math.min(MAX_QUEUE_DELAY_MS, Math.max(0, due - now));
}

/**
 * How a `workflow-start-stored` job is enqueued (at accept, and again for each 30-day link of a long
 * wait): due at its time, and kept when the queue gives up on it, so that its trigger shows failed
 * rather than pending for good.
 */
export function storedStartOptions(job: WorkflowStartStoredJob, now: number) {
  return {
    delay: queueDelay(job.due_at, now),
    backoffSchedule: JOB_BACKOFF_MS,
    keysIfUndelivered: [sendKeys.undelivered(job.trigger_id, job.id)],
  };
}

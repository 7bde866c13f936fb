import { z } from "zod";
import type { JobQueue, UnitOfWork } from "../engine/queue.ts";
import { storedJobOptions } from "../sending/jobs.ts";
import { WorkflowStartSchema } from "./start.ts";

/** Starts of workflows accepted together (one group commit): API triggers and events. */
export const WorkflowStartsJobSchema = z.object({
  type: z.literal("workflow-starts"),
  id: z.string(),
  starts: z.array(WorkflowStartSchema),
});
export type WorkflowStartsJob = z.infer<typeof WorkflowStartsJobSchema>;

/**
 * A start recorded in Postgres (scheduled, or too large for a queue message), named by its trigger.
 * A job that fires before `due_at` (a schedule past the queue's 30-day delay) waits again.
 */
export const WorkflowStartStoredJobSchema = z.object({
  type: z.literal("workflow-start-stored"),
  id: z.string(),
  trigger_id: z.string(),
  due_at: z.number(),
});
export type WorkflowStartStoredJob = z.infer<typeof WorkflowStartStoredJobSchema>;

/**
 * Enqueues a stored start, due at its time: at accept (in `unitOfWork`, beside the start's pending
 * record) and again for each 30-day link of a long wait. On Deno KV the job leaves its undelivered
 * key when the queue gives up on it, so that its trigger shows failed rather than pending for good.
 */
export async function enqueueStoredStart(
  queue: JobQueue<{ type: string }>,
  job: WorkflowStartStoredJob,
  now: number,
  unitOfWork?: UnitOfWork,
): Promise<void> {
  const { delay } = storedJobOptions(job, now);
  await queue.enqueue(job, { delayMs: delay, forTrigger: job.trigger_id }, unitOfWork);
}

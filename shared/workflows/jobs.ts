import { z } from "zod";
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

import { z } from "zod";

/** Pages the contacts of a tag or all start into executions, from the contact id `after` on. */
export const WorkflowFanoutJobSchema = z.object({
  type: z.literal("workflow-fanout"),
  id: z.string(),
  trigger_id: z.string(),
  workflow_id: z.string(),
  /** The tags every contact must carry (a tag start); empty for all. */
  tags: z.array(z.string()),
  after: z.string().nullable(),
});
export type WorkflowFanoutJob = z.infer<typeof WorkflowFanoutJobSchema>;

/**
 * Runs one step of a workflow for a batch of executions that share it and its due time (at most
 * 500, of one start or of many): one queue message per batch and step, never one per contact.
 */
export const WorkflowStepJobSchema = z.object({
  type: z.literal("workflow-step"),
  id: z.string(),
  workflow_id: z.string(),
  step_order: z.number().int(),
  execution_ids: z.array(z.string()).min(1).max(500),
  /** When the step is due (ms since the epoch): a job that fires early (a chained delay) waits again. */
  due_at: z.number(),
  /** Earlier tries that met a temporary provider failure. */
  attempt: z.number().int().nonnegative().default(0),
});
export type WorkflowStepJob = z.infer<typeof WorkflowStepJobSchema>;

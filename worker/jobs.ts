import { z } from "zod";
import { SendGroupJobSchema, SendStoredJobSchema } from "../shared/sending/jobs.ts";
import { SpoolDrainJobSchema } from "../shared/engine/kv/spool.ts";
import { WorkflowStartsJobSchema, WorkflowStartStoredJobSchema } from "../shared/workflows/jobs.ts";
import { WebhookDeliverJob } from "../shared/webhook_events.ts";
import { WorkflowFanoutJobSchema, WorkflowStepJobSchema } from "./workflows/jobs.ts";
import { FallbackJobSchema } from "./fallback_job.ts";

/** Who a fan-out reaches among a team's contacts: every condition given must hold. */
export const RecipientFilterSchema = z.object({
  tags_all: z.array(z.string()).optional(),
  tags_any: z.array(z.string()).optional(),
  is_active: z.boolean().optional(),
});
export type RecipientFilter = z.infer<typeof RecipientFilterSchema>;

/** Pages the recipients of one execution of a fan-out send into deliver-batch jobs. */
export const DispatchJobSchema = z.object({
  type: z.literal("dispatch"),
  id: z.string(),
  trigger_id: z.string(),
  execution_id: z.string(),
});
export type DispatchJob = z.infer<typeof DispatchJobSchema>;

/** Delivers one page of a fan-out: the contacts with `after` < id <= `until` that match `filter`. */
export const DeliverBatchJobSchema = z.object({
  type: z.literal("deliver-batch"),
  id: z.string(),
  trigger_id: z.string(),
  execution_id: z.string(),
  batch_no: z.number().int().nonnegative(),
  after: z.string().nullable(),
  until: z.string(),
  filter: RecipientFilterSchema,
  /** Earlier tries that met a temporary provider failure. */
  attempt: z.number().int().nonnegative().default(0),
});
export type DeliverBatchJob = z.infer<typeof DeliverBatchJobSchema>;

/**
 * Every job the queue carries, told apart by `type`. A later job type adds its schema here and
 * its case in worker/queue.ts (the switch there is exhaustive, so the compiler asks for it).
 */
export const JobSchema = z.discriminatedUnion("type", [
  SendGroupJobSchema,
  SendStoredJobSchema,
  DispatchJobSchema,
  DeliverBatchJobSchema,
  WorkflowStartsJobSchema,
  WorkflowStartStoredJobSchema,
  WorkflowFanoutJobSchema,
  WorkflowStepJobSchema,
  WebhookDeliverJob,
  SpoolDrainJobSchema,
  FallbackJobSchema,
]);
export type Job = z.infer<typeof JobSchema>;

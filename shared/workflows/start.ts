import { z } from "zod";

const Json = z.record(z.string(), z.unknown());

/** Who an API start reaches: one contact, every contact carrying ALL the tags, or everyone. */
export const StartRecipientSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("contact"), contact_id: z.string(), external_id: z.string() }),
  z.object({ type: z.literal("tag"), tags: z.array(z.string()).min(1) }),
  z.object({ type: z.literal("all") }),
]);
export type StartRecipient = z.infer<typeof StartRecipientSchema>;

/** Per step_order: what the advanced send changes for this start only. */
export const StepOverrideSchema = z.object({
  variables: Json.optional(),
  delay_minutes: z.number().min(0).optional(),
  is_active: z.boolean().optional(),
});
export type StepOverride = z.infer<typeof StepOverrideSchema>;

/** The event of an event start. */
export const StartEventSchema = z.object({
  name: z.string(),
  data: Json,
  user_info: Json,
  source: Json,
});
export type StartEvent = z.infer<typeof StartEventSchema>;

/**
 * One accepted start of workflows (an API trigger or advanced send, or an event): what the worker
 * needs to make the executions. An API start names its workflow and recipients; an event start
 * names the event, and the worker finds the workflows and the contact.
 */
export const WorkflowStartSchema = z.object({
  trigger_id: z.string(),
  job_id: z.string(),
  team_id: z.string(),
  /** Test key: outbox only, never charged. */
  sandbox: z.boolean(),
  source: z.enum(["api", "event"]),
  workflow_id: z.string().optional(),
  recipient: StartRecipientSchema.optional(),
  /** The id of the one execution of a contact start, answered to the caller at once. */
  execution_id: z.string().optional(),
  event: StartEventSchema.optional(),
  variables: Json,
  channel_variables: z.record(z.string(), Json),
  steps_override: z.record(z.string(), StepOverrideSchema),
  metadata: Json,
  /** Milliseconds since the epoch. */
  created_at: z.number(),
  scheduled_for: z.number().nullable(),
});
export type WorkflowStart = z.infer<typeof WorkflowStartSchema>;

/** How a start's trigger is recorded: flow, trigger and recipient types. */
export function triggerTypesOf(start: WorkflowStart) {
  return {
    flow_type: "workflow" as const,
    trigger_type: start.source === "event" ? "event" as const : "workflow" as const,
    recipient_type: start.source === "event" ? "event" : start.recipient?.type ?? null,
  };
}

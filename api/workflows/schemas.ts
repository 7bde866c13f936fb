import { z } from "@hono/zod-openapi";
import { fallbackAfterProblem } from "../sending/fallback.ts";
import { MAX_KEY_LENGTH, MAX_TAG_LENGTH, RecordId, RecordKey } from "../../shared/http/schemas.ts";

/** The channels a workflow step can send on. */
export const StepChannel = z.enum(["email", "sms", "whatsapp"]);

/** Ten years: a longer delay is surely a mistake (delays past the queue's 30 days are chained). */
const MAX_DELAY_MINUTES = 10 * 365 * 24 * 60;

/** The longest workflow name (and event type). */
export const MAX_WORKFLOW_NAME = 200;

const Variables = z.record(z.string(), z.unknown());

/** A step's `configuration`; other keys (conversation_category …) are kept as given. */
const Configuration = z.looseObject({
  template_id: z.string().trim().min(1).max(MAX_KEY_LENGTH),
  delay_minutes: z.number().min(0).max(MAX_DELAY_MINUTES).default(0),
  variables: Variables.optional(),
  conversation_category: z.enum(["MARKETING", "UTILITY", "AUTHENTICATION"]).optional(),
  fallback_channels: z.array(StepChannel).max(2).optional(),
  fallback_after_minutes: z.number().optional(),
});
/** Accepts `template_key` for `template_id` (clients name templates by key elsewhere). */
const ConfigurationInput = z.preprocess((value) => {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const { template_key, ...rest } = value as Record<string, unknown>;
    if (rest.template_id === undefined && template_key !== undefined) return { ...rest, template_id: template_key };
  }
  return value;
}, Configuration);

/** One step of a create or update body. */
export const StepInput = z.object({
  step_order: z.number().int().min(1).max(1000),
  channel_type: StepChannel,
  step_name: z.string().trim().min(1).max(200).optional(),
  is_active: z.boolean().optional(),
  configuration: ConfigurationInput,
}).superRefine((step, ctx) => {
  // A fallback channel is another channel, tried once: the contact would otherwise get it twice.
  const seen = new Set<string>([step.channel_type]);
  for (const channel of step.configuration.fallback_channels ?? []) {
    if (seen.has(channel)) {
      const message = channel === step.channel_type
        ? `fallback_channels cannot name the step's own channel (${channel})`
        : `fallback_channels names ${channel} twice`;
      ctx.addIssue({ code: "custom", path: ["configuration", "fallback_channels"], message });
      return;
    }
    seen.add(channel);
  }
  // As a send: a WhatsApp message not reported delivered in time falls back (worker/workflows/step_fallback.ts).
  const minutes = step.configuration.fallback_after_minutes;
  const chain = [step.channel_type, ...step.configuration.fallback_channels ?? []];
  const problem = minutes === undefined ? undefined : fallbackAfterProblem(minutes, chain);
  if (problem) ctx.addIssue({ code: "custom", path: ["configuration", "fallback_after_minutes"], message: problem });
}).openapi("WorkflowStepInput");

/** Who a start may reach (our addition): every condition given must hold. */
export const Conditions = z.strictObject({
  tags: z.array(z.string().min(1).max(MAX_TAG_LENGTH)).max(50).optional(),
  segment_id: RecordKey.min(1).optional(),
  cooldown_minutes: z.number().min(0).max(MAX_DELAY_MINUTES).optional(),
}).openapi("WorkflowConditions");

const Steps = z.array(StepInput).min(1).max(50).refine(
  (steps) => new Set(steps.map((s) => s.step_order)).size === steps.length,
  { error: "steps must have unique step_order values" },
);

/** `POST /workflows` body. */
export const CreateWorkflowBody = z.object({
  name: z.string().trim().min(1).max(MAX_WORKFLOW_NAME),
  description: z.string().max(2000).nullable().optional(),
  event_type: z.string().trim().min(1).max(MAX_WORKFLOW_NAME),
  is_active: z.boolean().optional(),
  conditions: Conditions.nullable().optional(),
  steps: Steps,
}).openapi("CreateWorkflow");

/** `PATCH /workflows/:id` body: the fields given change; `steps`, when given, replace the steps. */
export const UpdateWorkflowBody = z.object({
  name: z.string().trim().min(1).max(MAX_WORKFLOW_NAME).optional(),
  description: z.string().max(2000).nullable().optional(),
  event_type: z.string().trim().min(1).max(MAX_WORKFLOW_NAME).optional(),
  is_active: z.boolean().optional(),
  conditions: Conditions.nullable().optional(),
  steps: Steps.optional(),
}).openapi("UpdateWorkflow");

/** The step input after validation. */
export type StepInputData = z.infer<typeof StepInput>;
/** The create body after validation. */
export type CreateWorkflowData = z.infer<typeof CreateWorkflowBody>;
/** The update body after validation. */
export type UpdateWorkflowData = z.infer<typeof UpdateWorkflowBody>;
/** Conditions after validation. */
export type ConditionsData = z.infer<typeof Conditions>;

/**
 * `:id` of a path: any string (not too long), so that a malformed id is 404 'Workflow not found'
 * like an unknown one.
 */
export const WorkflowParam = z.object({
  id: RecordId.openapi({ param: { name: "id", in: "path" }, format: "uuid" }),
});

const Bool = z.enum(["true", "false"]).transform((v) => v === "true");

/** `GET /workflows` query. */
export const ListQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  event_type: z.string().min(1).max(200).optional(),
  is_active: Bool.optional(),
  search: z.string().max(200).optional(),
});

/** `GET /workflows/:id/executions` query. */
export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** A workflow step as answered. */
export const StepSchema = z.object({
  id: z.string(),
  step_order: z.number(),
  channel_type: StepChannel,
  step_name: z.string(),
  is_active: z.boolean(),
  configuration: z.looseObject({
    template_id: z.string(),
    delay_minutes: z.number(),
    variables: Variables.optional(),
  }),
}).openapi("WorkflowStep");

/** A workflow as answered. */
export const WorkflowSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  event_type: z.string(),
  is_active: z.boolean(),
  conditions: z.object({
    tags: z.array(z.string()).optional(),
    segment_id: z.string().optional(),
    cooldown_minutes: z.number().optional(),
  }),
  created_at: z.string(),
  updated_at: z.string(),
  steps: z.array(StepSchema),
}).openapi("Workflow");

/** `GET /workflows` answer. */
export const WorkflowList = z.object({
  workflows: z.array(WorkflowSchema),
  total: z.number(),
  page: z.number(),
  totalPages: z.number(),
  limit: z.number(),
}).openapi("WorkflowList");

/** `DELETE /workflows/:id` answer. */
export const DeletedWorkflow = z.object({ deleted: z.boolean(), id: z.string() }).openapi("DeletedWorkflow");

const ChannelBase = {
  execution_count: z.number(),
  total_contacts: z.number(),
  sent: z.number(),
  failed: z.number(),
};

/** The statistics view of `GET /workflows/:id` (with the workflow's own fields). */
export const WorkflowDetails = WorkflowSchema.extend({
  campaign_name: z.string(),
  trigger_type: z.string(),
  trigger_source: z.string(),
  status: z.enum(["PENDING", "PROCESSING", "COMPLETED", "FAILED"]),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  scheduled_at: z.string().nullable(),
  duration_seconds: z.number(),
  workflow_executions_count: z.number(),
  channels: z.object({
    email: z.object({ ...ChannelBase, success_rate: z.number() }).optional(),
    sms: z.object({ ...ChannelBase, success_rate: z.number(), estimated_cost: z.number() }).optional(),
    whatsapp: z.object({
      ...ChannelBase,
      delivered: z.number(),
      read: z.number(),
      delivery_rate: z.number(),
      read_rate: z.number(),
      estimated_cost: z.number(),
    }).optional(),
  }),
  totals: z.object({
    total_contacts: z.number(),
    total_sent: z.number(),
    total_failed: z.number(),
    overall_success_rate: z.number(),
    total_cost: z.number(),
    currency: z.string(),
  }),
  progress: z.object({ processed: z.number(), total: z.number(), percentage: z.number() }),
}).openapi("WorkflowDetails");

/** One execution of `GET /workflows/:id/executions`. */
export const ExecutionSchema = z.object({
  id: z.string(),
  trigger_id: z.string(),
  contact_id: z.string().nullable(),
  status: z.enum(["PENDING", "PROCESSING", "SCHEDULED", "COMPLETED", "FAILED"]),
  current_step: z.number().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  steps: z.array(z.object({
    step_order: z.number(),
    channel_type: StepChannel,
    status: z.string(),
    message_id: z.string().optional(),
    error: z.string().optional(),
  })),
}).openapi("WorkflowExecution");

/** `GET /workflows/:id/executions` answer. */
export const ExecutionList = z.object({
  executions: z.array(ExecutionSchema),
  total: z.number(),
  page: z.number(),
  totalPages: z.number(),
  limit: z.number(),
}).openapi("WorkflowExecutionList");

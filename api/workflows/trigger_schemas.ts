import { z } from "@hono/zod-openapi";
import { MAX_SEND_TAGS, MAX_TAG_LENGTH, RecordId } from "../../shared/http/schemas.ts";
import { specMessage } from "../../shared/http/validation.ts";
import { triggerAtField, withTriggerAtAliases } from "./schedule.ts";
import { MAX_WORKFLOW_NAME } from "./schemas.ts";

const badTriggerAt = specMessage("Invalid trigger_at format", "trigger_at", "invalid_format");

const Json = z.record(z.string(), z.unknown());

/** `tag` or `tags`: a list of tags, or one tag (a comma-separated string splits). */
const TagList = z.union([
  z.array(z.string().trim().min(1).max(MAX_TAG_LENGTH)).max(MAX_SEND_TAGS),
  z.string().max(MAX_SEND_TAGS * (MAX_TAG_LENGTH + 1)),
]).transform((v) => (Array.isArray(v) ? v : v.split(",")).map((t) => t.trim()).filter(Boolean));

/** Per step_order (as a key, or as items of a list): what this start changes of a step. */
const StepOverride = z.strictObject({
  variables: Json.optional(),
  delay_minutes: z.number().min(0).optional(),
  is_active: z.boolean().optional(),
});
/** Keyed by step_order, or a list of items carrying their step_order (turned into the keyed form). */
const StepsOverride = z.preprocess(
  (value) =>
    Array.isArray(value)
      ? Object.fromEntries(value.map((item, i) => {
        const { step_order, ...rest } = (item ?? {}) as Record<string, unknown>;
        return [typeof step_order === "number" ? String(step_order) : `item ${i}`, rest];
      }))
      : value,
  z.record(z.string().regex(/^\d+$/), StepOverride),
);

const fields = {
  workflow_id: RecordId.min(1).optional(),
  workflow_name: z.string().min(1).max(MAX_WORKFLOW_NAME).optional(),
  recipient_type: z.enum(["contact", "tag", "all"]),
  contact_external_id: RecordId.min(1).optional(),
  tag: TagList.optional(),
  tags: TagList.optional(),
  variables: Json.optional(),
  channel_variables: z.strictObject({ email: Json.optional(), sms: Json.optional(), whatsapp: Json.optional() })
    .optional(),
  metadata: Json.optional(),
  trigger_at: triggerAtField(badTriggerAt).optional(),
};

/** The checks that span fields: which workflow, and the recipients of the recipient type. */
function checkTarget(
  body: { workflow_id?: string; workflow_name?: string; recipient_type: string; contact_external_id?: string },
  tags: string[],
  ctx: z.RefinementCtx,
): void {
  if (!body.workflow_id && !body.workflow_name) {
    ctx.addIssue({ code: "custom", path: ["workflow_id"], message: "workflow_id or workflow_name is required" });
  }
  if (body.recipient_type === "contact" && !body.contact_external_id) {
    ctx.addIssue({ code: "custom", path: ["contact_external_id"], message: "contact_external_id should not be empty" });
  }
  if (body.recipient_type === "tag" && tags.length === 0) {
    ctx.addIssue({ code: "custom", path: ["tag"], message: "tag should not be empty" });
  }
}

/** `POST /workflows/trigger` body. */
export const TriggerWorkflowBody = withTriggerAtAliases(
  z.object(fields).superRefine((b, ctx) => checkTarget(b, [...b.tag ?? [], ...b.tags ?? []], ctx)),
).openapi("TriggerWorkflow");

/** `POST /workflows/send` body: the trigger's fields, plus per-step overrides. */
export const SendWorkflowBody = withTriggerAtAliases(
  z.object({ ...fields, steps_override: StepsOverride.optional() })
    .superRefine((b, ctx) => checkTarget(b, [...b.tag ?? [], ...b.tags ?? []], ctx)),
).openapi("SendWorkflow");

/** Either body after validation. */
export type TriggerWorkflowData = z.infer<typeof SendWorkflowBody>;

/** The answer of a workflow start. */
export const WorkflowTriggered = z.object({
  success: z.boolean(),
  trigger_id: z.string(),
  job_id: z.string(),
  execution_ids: z.array(z.string()),
  message: z.string(),
  scheduled_for: z.string().optional(),
  data: z.object({ trigger_id: z.string(), job_id: z.string() }),
}).openapi("WorkflowTriggered");

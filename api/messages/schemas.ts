import { z } from "@hono/zod-openapi";
import { FallbackFields } from "../sending/fallback.ts";
import {
  errorResponses,
  MAX_EMAIL_LENGTH,
  MAX_SEND_TAGS,
  MAX_TAG_LENGTH,
  RecordId,
  RecordKey,
  timestamp,
} from "../../shared/http/schemas.ts";

/** Response entries for the error statuses a send or tracking route answers. */
export const errors = errorResponses({
  400: "Invalid request",
  403: "Insufficient permissions",
  404: "Not found",
  409: "A request with this Idempotency-Key is in progress",
  422: "Idempotency-Key reused with another body",
  429: "Rate limit exceeded",
});

/** A string (comma-separated tags) or a list of strings (tags), bounded (see MAX_SEND_TAGS). */
export const TagList = z.union([
  z.string().max(MAX_SEND_TAGS * (MAX_TAG_LENGTH + 1)),
  z.array(z.string().max(MAX_TAG_LENGTH)).max(MAX_SEND_TAGS),
]);
/** Free-form object. */
export const Json = z.record(z.string(), z.unknown());
/** Template variables: an object (`{{name}}`), or a list for WhatsApp's `{{1}}`, `{{2}}`. */
export const Variables = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]);

/** trigger_at, triggerAt and scheduled_at: every schedulable send takes all three; null is "now". */
export const ScheduleFields = {
  trigger_at: z.string().nullish().openapi({ description: "ISO 8601 UTC; schedules the send" }),
  triggerAt: z.string().nullish().openapi({ description: "Alias of trigger_at" }),
  scheduled_at: z.string().nullish().openapi({ description: "Alias of trigger_at" }),
};

/** The asynchronous send body (201). */
export const AcceptedSend = z.object({
  success: z.literal(true),
  trigger_id: z.string(),
  job_id: z.string(),
  message: z.string(),
  scheduled_for: timestamp.optional(),
  delay_ms: z.number().optional(),
  // The specification's alternative email shape, on POST /messages/send.
  execution_id: z.string().optional(),
  status: z.literal("queued").optional(),
  recipient_type: z.string().optional(),
  estimated_recipients: z.number().nullable().optional(),
  created_at: timestamp.optional(),
  data: z.object({ trigger_id: z.string(), job_id: z.string() }),
  warnings: z.array(z.string()).optional().openapi({
    description: "What the sender should know though the send was accepted: template variables nothing " +
      "supplies (they render empty), no provider configured for the channel (kept in the outbox, not charged)",
  }),
}).openapi("AcceptedSend");

/** POST /messages/send. */
export const EmailSendBody = z.object({
  recipient_type: z.enum(["direct_email", "contact", "tag", "segment", "all"]),
  direct_email: z.string().optional(),
  contact_external_id: RecordId.optional(),
  tag: TagList.optional(),
  tags: TagList.optional(),
  segment_id: RecordKey.optional(),
  subject: z.string().optional(),
  content: z.string().optional().openapi({ description: "HTML body (without a template)" }),
  plain_text_content: z.string().optional(),
  template_key: RecordKey.optional(),
  variables: Variables.optional(),
  from_email: z.string().max(MAX_EMAIL_LENGTH).optional(),
  from_name: z.string().optional(),
  reply_to: z.string().optional(),
  direct_first_name: z.string().optional(),
  direct_last_name: z.string().optional(),
  message_category: z.enum(["transactional", "promotional"]).optional(),
  campaign_name: z.string().optional(),
  metadata: Json.optional(),
  ...ScheduleFields,
  ...FallbackFields,
}).openapi("EmailSendRequest");

/** POST /messages/trigger. */
export const TriggerBody = z.object({
  recipient_type: z.enum(["contact", "tag", "segment", "all"]),
  channels: z.array(z.string()).min(1),
  contact_external_id: RecordId.optional(),
  tags: TagList.optional(),
  tag: TagList.optional(),
  segment_id: RecordKey.optional(),
  template_key: RecordKey.optional(),
  push_title: z.string().optional(),
  push_body: z.string().optional(),
  variables: Variables.optional(),
  metadata: Json.optional(),
  from_email: z.string().max(MAX_EMAIL_LENGTH).optional(),
  from_name: z.string().optional(),
  message_category: z.enum(["transactional", "promotional"]).optional(),
  campaign_name: z.string().optional(),
  ...ScheduleFields,
  fallback_channels: FallbackFields.fallback_channels.openapi({
    description: "Channels tried in order for a contact the first of `channels` cannot reach (no address), or " +
      "whose message on it fails; each sends the same `template_key` and is charged as that channel. The other " +
      "channels of the trigger send as usual and have no fallback; none of them may be a fallback channel. A " +
      "contact whose preference is off is never fallen back around.",
    example: ["sms"],
  }),
  fallback_after_minutes: FallbackFields.fallback_after_minutes,
}).openapi("TriggerRequest");

/** The multi-channel trigger's answer (200). */
export const TriggerAccepted = z.object({
  success: z.literal(true),
  trigger_id: z.string(),
  job_id: z.string(),
  message: z.string(),
  channels_triggered: z.array(z.string()),
  executions: z.array(z.object({ channel: z.string(), execution_id: z.string() })),
  scheduled_for: timestamp.optional(),
  data: z.object({ trigger_id: z.string(), job_id: z.string() }),
  warnings: AcceptedSend.shape.warnings,
}).openapi("TriggerAccepted");

/** An execution (one channel of a trigger). */
export const Execution = z.object({
  id: z.string(),
  trigger_id: z.string(),
  channel: z.string(),
  status: z.enum(["pending", "processing", "completed", "failed"]),
  total_contacts: z.number().int(),
  sent_count: z.number().int(),
  failed_count: z.number().int(),
  filtered_count: z.number().int(),
  created_at: timestamp,
  completed_at: timestamp.nullable(),
}).openapi("Execution");

/** A page of executions; `data` is the same list (the SDK iterates `executions.data`). */
export const ExecutionList = z.object({
  executions: z.array(Execution),
  data: z.array(Execution),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  totalPages: z.number().int(),
}).openapi("ExecutionList");

/** One hand-over of a message to a channel account of its team (provider failover). */
export const Attempt = z.object({
  account: z.string().openapi({ description: "The channel account's id, or default:<channel> for the service's" }),
  provider: z.string(),
  outcome: z.enum(["sent", "refused", "temporary", "unknown", "skipped"]),
  provider_message_id: z.string().optional(),
  error: z.string().optional(),
}).openapi("MessageAttempt");

/** One recipient's message of an execution. */
export const Job = z.object({
  id: z.string(),
  recipient: z.string().nullable(),
  contact_id: z.string().nullable(),
  status: z.enum(["pending", "scheduled", "sent", "failed", "filtered"]).openapi({
    description: "`scheduled`: a promotional message held by the team's quiet hours until `scheduled_for`",
  }),
  provider_message_id: z.string().nullable(),
  error: z.string().nullable(),
  cost: z.number(),
  created_at: timestamp,
  sent_at: timestamp.nullable(),
  missing_variables: z.array(z.string()).openapi({
    description: "Template variables that had no value and rendered empty",
  }),
  note: z.string().nullable().openapi({
    description: "Why the message is not what it seems, e.g. kept in the outbox (not charged): no provider configured",
  }),
  scheduled_for: timestamp.nullable().openapi({
    description: "When a message held by quiet hours goes (or went); null for one never held (docs/sending.md)",
  }),
  attempts: z.array(Attempt).nullable().openapi({
    description: "Each hand-over to the team's channel accounts, in order; null when the team has none for the channel",
  }),
}).openapi("ExecutionJob");

/** A page of an execution's messages. */
export const JobList = z.object({
  execution_id: z.string(),
  channel: z.string(),
  jobs: z.array(Job),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  totalPages: z.number().int(),
}).openapi("ExecutionJobList");

/** `page` (default 1) and `limit` (default 20, at most 100). */
export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** An execution id (or its trigger's id). */
export const ExecutionParams = z.object({ id: RecordId });
/** An execution id in a jobs path. */
export const JobsParams = z.object({ execution_id: RecordId });

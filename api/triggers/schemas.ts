import { z } from "@hono/zod-openapi";
import { RecordId, timestamp } from "../../shared/http/schemas.ts";
import { Execution } from "../messages/schemas.ts";

const Status = z.enum(["pending", "processing", "completed", "failed"]);

/** A trigger id in a path. */
export const TriggerParams = z.object({ trigger_id: RecordId });

/** GET /triggers/{trigger_id}. */
export const Trigger = z.object({
  id: z.string(),
  trigger_id: z.string(),
  flow_type: z.string(),
  trigger_type: z.string(),
  status: Status,
  created_at: timestamp,
  started_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
  scheduled_for: timestamp.nullable(),
  summary: z.object({
    total_contacts: z.number().int(),
    sent: z.number().int(),
    failed: z.number().int(),
    filtered: z.number().int(),
  }),
  note: z.string().optional().openapi({
    description: "Why a completed workflow trigger reached no one (conditions not met, cooldown, no such contact…)",
  }),
  missing_variables: z.array(z.string()).optional().openapi({
    description: "Template variables that had no value and rendered empty in some of its messages",
  }),
  warnings: z.array(z.string()).optional().openapi({
    description: "What the sender should know though the messages went out (missing variables, no provider …)",
  }),
  channels: z.array(z.string()),
  details_endpoint: z.string(),
}).openapi("Trigger");

/** GET /triggers/{trigger_id}/direct. */
export const DirectTrigger = z.object({
  trigger_id: z.string(),
  flow_type: z.string(),
  trigger_type: z.string(),
  channel: z.string(),
  status: Status,
  summary: Trigger.shape.summary,
  executions: z.array(z.object({
    channel: z.string(),
    execution: Execution.pick({
      id: true,
      status: true,
      total_contacts: true,
      sent_count: true,
      failed_count: true,
      filtered_count: true,
      created_at: true,
      completed_at: true,
    }),
    jobs_endpoint: z.string(),
  })),
}).openapi("DirectTrigger");

import { z } from "@hono/zod-openapi";
import { MAX_EMAIL_LENGTH, RecordId } from "../../shared/http/schemas.ts";
import { specMessage } from "../../shared/http/validation.ts";
import { triggerAtField, withTriggerAtAliases } from "../workflows/schedule.ts";

const nameRequired = specMessage("Event name is required", "event_name", "required");
const badTriggerAt = specMessage("Invalid trigger_at format", "trigger_at", "invalid_format");

const Json = z.record(z.string(), z.unknown());

/** Who the event is about: the contact is found by `contact_external_id`, else by `email`. */
export const UserInfo = z.looseObject({
  contact_external_id: RecordId.optional(),
  email: z.string().max(MAX_EMAIL_LENGTH).optional(),
  phone: z.string().max(32).optional(),
  name: z.string().max(200).optional(),
  custom_fields: Json.optional(),
}).openapi("EventUserInfo");

/** `POST /events/send` body. */
export const SendEventBody = withTriggerAtAliases(
  z.object({
    event_name: z.string({ error: nameRequired }).trim().min(1, { error: nameRequired }).max(200),
    user_info: UserInfo.optional(),
    source: z.looseObject({
      type: z.string().max(100).optional(),
      ip: z.string().max(100).optional(),
      user_agent: z.string().max(1000).optional(),
    }).optional(),
    event_data: Json.optional(),
    variables: Json.optional(),
    trigger_at: triggerAtField(badTriggerAt).optional(),
  }),
).openapi("SendEvent");

/** The body after validation. */
export type SendEventData = z.infer<typeof SendEventBody>;

/** The asynchronous send answer of an event. */
export const EventAccepted = z.object({
  success: z.boolean(),
  trigger_id: z.string(),
  job_id: z.string(),
  message: z.string(),
  scheduled_for: z.string().optional(),
  data: z.object({ trigger_id: z.string(), job_id: z.string() }),
}).openapi("EventAccepted");

import { z } from "@hono/zod-openapi";
import { FallbackFields } from "../sending/fallback.ts";
import { RecordId, RecordKey } from "../../shared/http/schemas.ts";
import { Json, ScheduleFields, TagList, Variables } from "../messages/schemas.ts";

/** POST /sms/send. */
export const SmsSendBody = z.object({
  template_key: RecordKey.min(1),
  recipient_type: z.enum(["direct_sms", "contact", "tag", "all"]),
  direct_phone: z.string().optional().openapi({ description: "E.164, when recipient_type is direct_sms" }),
  direct_sms: z.string().optional().openapi({ description: "Alias of direct_phone" }),
  contact_external_id: RecordId.optional(),
  tag: TagList.optional(),
  tags: TagList.optional(),
  direct_first_name: z.string().optional(),
  direct_last_name: z.string().optional(),
  variables: Variables.optional(),
  metadata: Json.optional(),
  sms_identity_id: RecordKey.optional(),
  message_category: z.enum(["transactional", "promotional"]).optional(),
  campaign_name: z.string().optional(),
  ...ScheduleFields,
  ...FallbackFields,
}).openapi("SmsSendRequest");

import { z } from "@hono/zod-openapi";
import { FallbackFields } from "../sending/fallback.ts";
import { RecordId, RecordKey } from "../../shared/http/schemas.ts";
import { Json, ScheduleFields, TagList, Variables } from "../messages/schemas.ts";

/** POST /whatsapp/send. */
export const WhatsAppSendBody = z.object({
  template_key: RecordKey.min(1),
  recipient_type: z.enum(["direct_whatsapp", "contact", "tag", "all"]),
  conversation_category: z.enum(["MARKETING", "UTILITY", "AUTHENTICATION"]),
  direct_whatsapp: z.string().optional().openapi({ description: "E.164, when recipient_type is direct_whatsapp" }),
  direct_phone: z.string().optional().openapi({ description: "Alias of direct_whatsapp" }),
  contact_external_id: RecordId.optional(),
  tag: TagList.optional(),
  tags: TagList.optional(),
  direct_first_name: z.string().optional(),
  direct_last_name: z.string().optional(),
  variables: Variables.optional().openapi({ description: 'Keys are the numbers of the placeholders: "1", "2" …' }),
  metadata: Json.optional(),
  whatsapp_identity_id: RecordKey.optional(),
  campaign_name: z.string().optional(),
  ...ScheduleFields,
  ...FallbackFields,
}).openapi("WhatsAppSendRequest");

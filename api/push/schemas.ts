import { z } from "@hono/zod-openapi";
import { FallbackFields } from "../sending/fallback.ts";
import { RecordId, RecordKey } from "../../shared/http/schemas.ts";
import { Json, ScheduleFields, TagList, Variables } from "../messages/schemas.ts";

/** A push action button. */
const Action = z.object({ title: z.string(), action: z.string(), icon: z.string().optional() });

/** POST /push/send. */
export const PushSendBody = z.object({
  title: z.string().optional(),
  body: z.string().optional(),
  template_id: RecordKey.optional(),
  template_key: RecordKey.optional(),
  recipient_type: z.enum(["direct_push", "contact", "tag", "segment", "all"]),
  direct_device_token: z.string().optional(),
  direct_platform: z.enum(["android", "ios", "web"]).optional(),
  contact_external_id: RecordId.optional(),
  tag: TagList.optional(),
  tags: TagList.optional(),
  segment_id: RecordKey.optional(),
  direct_first_name: z.string().optional(),
  direct_last_name: z.string().optional(),
  image_url: z.string().optional(),
  click_action: z.string().optional(),
  actions: z.array(Action).optional().openapi({ description: "At most 3 on Android, 4 on iOS, 2 on the web" }),
  custom_data: Json.optional(),
  variables: Variables.optional(),
  metadata: Json.optional(),
  message_category: z.enum(["transactional", "promotional"]).optional(),
  campaign_name: z.string().optional(),
  push_identity_id: RecordKey.optional(),
  ...ScheduleFields,
  ...FallbackFields,
}).openapi("PushSendRequest");

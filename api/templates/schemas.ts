import { z } from "@hono/zod-openapi";
import { RecordKey, timestamp } from "../../shared/http/schemas.ts";

/** GET /templates query. */
export const TemplatesQuery = z.object({
  template_key: RecordKey.optional(),
  channel: z.enum(["email", "sms", "whatsapp", "push"]).optional(),
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(500).default(500),
});

/** A stored template as the API shows it. */
export const TemplateView = z.object({
  id: z.string(),
  key: z.string(),
  template_key: z.string(),
  channel: z.string(),
  status: z.string(),
  category: z.string().nullable(),
  subject: z.string().nullable(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  title: z.string().nullable(),
  body: z.string().nullable(),
  country_variations: z.record(z.string(), z.string()).nullable(),
  variables: z.array(z.string()),
  created_at: timestamp,
  updated_at: timestamp,
}).openapi("Template");

/** GET /templates answer. */
export const TemplateList = z.object({
  template_key: z.string().nullable(),
  exists: z.boolean(),
  channels: z.array(z.string()),
  templates: z.array(TemplateView),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  totalPages: z.number().int(),
}).openapi("TemplateList");

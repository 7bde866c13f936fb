import { z } from "zod";

/** A channel a send travels on. */
export const ChannelSchema = z.enum(["email", "sms", "whatsapp", "push"]);
/** A preference category. */
export const CategorySchema = z.enum(["transactional", "promotional"]);
/** A WhatsApp conversation category. */
export const ConversationCategorySchema = z.enum(["MARKETING", "UTILITY", "AUTHENTICATION"]);

const Record_ = z.record(z.string(), z.unknown());

/** The email of one execution: a template, or subject and HTML given in the request. */
export const EmailContentSchema = z.object({
  channel: z.literal("email"),
  template_key: z.string().optional(),
  subject: z.string().optional(),
  html: z.string().optional(),
  text: z.string().optional(),
  from_email: z.string().optional(),
  from_name: z.string().optional(),
  reply_to: z.string().optional(),
  category: CategorySchema,
});

/** The SMS of one execution. */
export const SmsContentSchema = z.object({
  channel: z.literal("sms"),
  template_key: z.string(),
  identity_id: z.string().optional(),
  category: CategorySchema,
});

/** The WhatsApp message of one execution. */
export const WhatsAppContentSchema = z.object({
  channel: z.literal("whatsapp"),
  template_key: z.string(),
  conversation_category: ConversationCategorySchema,
  identity_id: z.string().optional(),
});

/** The push notification of one execution: a template (key or id), or title and body. */
export const PushContentSchema = z.object({
  channel: z.literal("push"),
  template: z.string().optional(),
  title: z.string().optional(),
  body: z.string().optional(),
  image_url: z.string().optional(),
  click_action: z.string().optional(),
  actions: z.array(z.object({ title: z.string(), action: z.string(), icon: z.string().optional() })).optional(),
  custom_data: Record_.optional(),
  identity_id: z.string().optional(),
  category: CategorySchema,
});

/** What one channel of a send delivers. */
export const ContentSchema = z.discriminatedUnion("channel", [
  EmailContentSchema,
  SmsContentSchema,
  WhatsAppContentSchema,
  PushContentSchema,
]);
export type Content = z.infer<typeof ContentSchema>;
export type EmailContent = z.infer<typeof EmailContentSchema>;
export type SmsContent = z.infer<typeof SmsContentSchema>;
export type WhatsAppContent = z.infer<typeof WhatsAppContentSchema>;
export type PushContent = z.infer<typeof PushContentSchema>;

/** Who a send goes to. */
export const RecipientSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("direct"),
    /** Email address, E.164 number or push device token. */
    address: z.string(),
    first_name: z.string().optional(),
    last_name: z.string().optional(),
    platform: z.enum(["android", "ios", "web"]).optional(),
  }),
  z.object({ type: z.literal("contact"), contact_id: z.string(), external_id: z.string() }),
  z.object({ type: z.literal("tag"), tags: z.array(z.string()) }),
  z.object({ type: z.literal("segment"), segment_id: z.string() }),
  z.object({ type: z.literal("all") }),
]);
export type Recipient = z.infer<typeof RecipientSchema>;

/**
 * One channel of a send: its execution id and what it delivers. A fallback execution names the
 * execution whose unreached recipients it takes (`fallback_for`): it sends to no one else.
 */
export const ExecutionSpecSchema = z.object({
  id: z.string(),
  content: ContentSchema,
  fallback_for: z.string().optional(),
});
export type ExecutionSpec = z.infer<typeof ExecutionSpecSchema>;

/** What a single-channel send or a multi-channel trigger is, once validated: the worker delivers from this. */
export const SendSpecSchema = z.object({
  trigger_id: z.string(),
  job_id: z.string(),
  team_id: z.string(),
  /** Test key: outbox only, never charged. */
  sandbox: z.boolean(),
  trigger_type: z.enum(["email", "sms", "whatsapp", "push", "multi_channel"]),
  /** The recipient_type the caller gave (for the records). */
  recipient_type: z.string(),
  recipient: RecipientSchema,
  executions: z.array(ExecutionSpecSchema).min(1),
  variables: Record_,
  metadata: Record_,
  campaign_name: z.string().optional(),
  /** A WhatsApp message with a fallback not reported delivered within this many minutes falls back too. */
  fallback_after_minutes: z.number().positive().optional(),
  /** Milliseconds since the epoch. */
  created_at: z.number(),
  scheduled_for: z.number().nullable(),
});
export type SendSpec = z.infer<typeof SendSpecSchema>;

/** True when a send names one recipient (direct or one contact) rather than fanning out. */
export function isSingleRecipient(recipient: Recipient): boolean {
  return recipient.type === "direct" || recipient.type === "contact";
}

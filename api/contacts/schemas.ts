import { z } from "@hono/zod-openapi";
import { MAX_EMAIL_LENGTH } from "../../shared/email.ts";
import { isApnsToken, isValidDeviceToken } from "../../shared/contacts/device_tokens.ts";
import { SORT_COLUMNS } from "../../shared/contacts/list.ts";
import type { ContactRow } from "../../shared/contacts/queries.ts";
import { errorResponses, MAX_ID_LENGTH, MAX_TAG_LENGTH, RecordId, timestamp } from "../../shared/http/schemas.ts";
import { specMessage } from "../../shared/http/validation.ts";
import { e164Of } from "../../shared/phone.ts";
import { parseTimestamp } from "../../shared/timestamps.ts";

const MISSING_EMAIL = specMessage("Missing required field: email", "email", "required");
const INVALID_EMAIL = specMessage("Invalid email format", "email", "invalid_format");
const INVALID_TOKEN = specMessage("Invalid device token format", "token", "invalid_format");
const INVALID_PHONE = specMessage("phone must be in E.164 format", "phone", "invalid_format");

/** Response entries for the error statuses a route answers. */
export const errors = errorResponses({
  400: "Invalid request",
  403: "Insufficient permissions",
  404: "Contact not found",
  409: "Duplicate email or external_id",
  422: "Idempotency-Key reused with another body",
});

export const CHANNEL_VALUES = ["email", "sms", "whatsapp", "push"] as const;
export const CATEGORY_VALUES = ["transactional", "promotional"] as const;

const ChannelPreference = z.object({ transactional: z.boolean(), promotional: z.boolean() });

/** Subscription per channel and category. */
export const Preferences = z.object({
  email: ChannelPreference,
  sms: ChannelPreference,
  whatsapp: ChannelPreference,
  push: ChannelPreference,
}).openapi("Preferences");

/** The contact as every contact endpoint answers it. */
export const Contact = z.object({
  id: z.string().openapi({ format: "uuid" }),
  external_id: z.string(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  tags: z.array(z.string()),
  is_active: z.boolean(),
  is_unsubscribed: z.boolean(),
  unsubscribed_at: timestamp.nullable(),
  custom_fields: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
  preferences: Preferences,
  created_at: timestamp,
  updated_at: timestamp,
}).openapi("Contact");

/** The answer body of a contact (Dates serialise as ISO 8601 with milliseconds). */
export function contactBody(row: ContactRow) {
  return {
    id: row.id,
    external_id: row.external_id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    tags: row.tags,
    is_active: row.is_active,
    is_unsubscribed: row.is_unsubscribed,
    unsubscribed_at: row.unsubscribed_at,
    custom_fields: row.custom_fields,
    metadata: row.metadata,
    preferences: orderedPreferences(row.preferences),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Preferences in the specification's order (jsonb keeps keys sorted by length). */
export function orderedPreferences(p: ContactRow["preferences"]): ContactRow["preferences"] {
  const one = (c: { transactional: boolean; promotional: boolean }) => ({
    transactional: c.transactional,
    promotional: c.promotional,
  });
  return { email: one(p.email), sms: one(p.sms), whatsapp: one(p.whatsapp), push: one(p.push) };
}

/** A contact as lists show it. */
export const ContactListItem = z.object({
  id: z.string(),
  external_id: z.string(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  tags: z.array(z.string()),
  is_active: z.boolean(),
  created_at: timestamp,
}).openapi("ContactListItem");

/** A page of contacts; `pagination` only in page mode. */
export const ContactList = z.object({
  data: z.array(ContactListItem),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
  pagination: z.object({
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    totalPages: z.number().int(),
  }).optional(),
}).openapi("ContactList");

/** The email of a create: the specification's two messages. */
export const CreateEmail = z.email({
  error: (issue) =>
    issue.input === undefined || issue.input === null || issue.input === "" ? MISSING_EMAIL : INVALID_EMAIL,
}).max(MAX_EMAIL_LENGTH, { error: () => INVALID_EMAIL }).openapi({ example: "ada@example.com" });

const name = z.string().max(255).nullable();
const tags = z.array(z.string().min(1).max(MAX_TAG_LENGTH)).max(1000);
const jsonObject = z.record(z.string(), z.unknown());
/**
 * `custom_fields`: free-form, but `phone` is the number SMS and WhatsApp go to (and is indexed for
 * STOP replies): at most 32 characters (a 9,000-digit one overflowed the index: a 500).
 */
const customFields = jsonObject.refine(
  (fields) => typeof fields.phone !== "string" || fields.phone.length <= 32,
  { error: "custom_fields.phone must be at most 32 characters", path: ["phone"] },
);

/**
 * A top-level `phone` (as SDKs send it): an E.164 number, spaces, dashes, dots, brackets and a leading
 * 00 allowed, kept in E.164 as `custom_fields.phone`, where SMS and WhatsApp sends read it.
 */
const Phone = z.string().max(64, { error: () => INVALID_PHONE }).transform((value, ctx) => {
  const e164 = e164Of(value);
  if (e164 !== undefined) return e164;
  ctx.issues.push({ code: "custom", message: INVALID_PHONE, input: value });
  return z.NEVER;
}).openapi({ type: "string", example: "+14155550123" });

const ChannelPreferenceInput = z.strictObject({
  transactional: z.boolean().optional(),
  promotional: z.boolean().optional(),
});

/** Preferences in the read shape, any channel or category left out: applied over the defaults on create. */
export const PreferencesInput = z.strictObject({
  email: ChannelPreferenceInput.optional(),
  sms: ChannelPreferenceInput.optional(),
  whatsapp: ChannelPreferenceInput.optional(),
  push: ChannelPreferenceInput.optional(),
}).openapi("PreferencesInput", { example: { email: { promotional: true } } });

const fcmToken = z.string().refine(isValidDeviceToken, { error: () => INVALID_TOKEN });
const apnsToken = z.string().refine(isApnsToken, { error: () => INVALID_TOKEN });

/** POST /contacts body. */
export const CreateContactBody = z.object({
  email: CreateEmail,
  external_id: z.string().min(1).max(MAX_ID_LENGTH).optional(),
  first_name: name.optional(),
  last_name: name.optional(),
  tags: tags.optional(),
  is_active: z.boolean().optional(),
  custom_fields: customFields.optional(),
  metadata: jsonObject.optional(),
  phone: Phone.optional(),
  preferences: PreferencesInput.optional(),
  fcm_token: fcmToken.optional().openapi({
    description: "Registers an FCM device (Android, web, or iOS with Firebase)",
  }),
  apns_token: apnsToken.optional().openapi({ description: "Registers an iOS device by its APNs token (64 hex)" }),
}).openapi("CreateContact");

/** PUT/PATCH body: every field optional; only those given change. */
export const UpdateContactBody = z.object({
  email: z.email({ error: () => INVALID_EMAIL }).max(MAX_EMAIL_LENGTH, { error: () => INVALID_EMAIL }).optional(),
  external_id: z.string().min(1).max(MAX_ID_LENGTH).optional(),
  first_name: name.optional(),
  last_name: name.optional(),
  tags: tags.optional(),
  is_active: z.boolean().optional(),
  is_unsubscribed: z.boolean().optional(),
  custom_fields: customFields.optional(),
  metadata: jsonObject.optional(),
  phone: Phone.nullable().optional().openapi({ description: "Sets custom_fields.phone; null removes it" }),
}).openapi("UpdateContact");

/** `{id}` in the path: the contact id, or its external id when no contact has that id. */
export const IdParams = z.object({
  id: RecordId.min(1).openapi({ param: { name: "id", in: "path" }, description: "Contact id (or external id)" }),
});

/** `{external_id}` in the path. */
export const ExternalIdParams = z.object({
  external_id: RecordId.min(1).openapi({ param: { name: "external_id", in: "path" } }),
});

/** DELETE query: `hard=true` is accepted (deletion is always permanent). */
export const DeleteQuery = z.object({ hard: z.enum(["true", "false"]).optional() });

/** DELETE answer. */
export const Deleted = z.object({ deleted: z.literal(true), id: z.string() }).openapi("ContactDeleted");

const stringOrList = z.union([z.string(), z.array(z.string())]);
const dateParam = (field: string) =>
  z.string().refine((v) => parseTimestamp(v) !== undefined, `${field} must be an ISO 8601 date string`);

/** GET /contacts query: cursor mode, or page mode when `page` is given. */
export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(10),
  starting_after: z.guid({ error: "starting_after must be a UUID" }).optional().openapi({
    description: "Contact id: the page starts after it",
  }),
  page: z.coerce.number().int().min(1).optional(),
  tag: stringOrList.optional(),
  tags: stringOrList.optional().openapi({ description: "Comma-separated: contacts carrying all of them" }),
  is_active: z.enum(["true", "false"]).optional(),
  is_unsubscribed: z.enum(["true", "false"]).optional(),
  search: z.string().optional(),
  created_after: dateParam("created_after").optional(),
  created_before: dateParam("created_before").optional(),
  email: z.string().optional(),
  sort_by: z.enum(SORT_COLUMNS).default("created_at"),
  sort_order: z.enum(["ASC", "DESC", "asc", "desc"]).default("DESC"),
});

/** One preference change. */
export const PreferenceChange = z.object({
  channel: z.enum(CHANNEL_VALUES),
  category: z.enum(CATEGORY_VALUES),
  subscribed: z.boolean(),
});

/** PATCH …/preferences body. */
export const PreferencesBody = z.object({ preferences: z.array(PreferenceChange).min(1) }).openapi(
  "PreferencesUpdate",
);

/** GET …/preferences answer. */
export const PreferencesView = z.object({
  preferences: Preferences,
  totalPreferences: z.number().int(),
  subscribedCount: z.number().int(),
  unsubscribedCount: z.number().int(),
  subscriptionRate: z.number().openapi({ description: "Subscribed share, percent" }),
}).openapi("PreferencesView");

/** `{channel}` in the path. */
export const ChannelParam = z.enum(CHANNEL_VALUES).openapi({ param: { name: "channel", in: "path" } });
/** `{category}` in the path. */
export const CategoryParam = z.enum(CATEGORY_VALUES).openapi({ param: { name: "category", in: "path" } });

/** `{subscribed}` body of one preference. */
export const SubscribedBody = z.object({ subscribed: z.boolean() });

/** POST|DELETE …/tags body. */
export const TagsBody = z.object({ tags: z.array(z.string().min(1).max(MAX_TAG_LENGTH)).min(1).max(1000) });

/**
 * One entry of a bulk creation: the email is checked per entry, so one bad entry fails alone.
 * Device tokens are registered one contact at a time (create, or PATCH …/device-token).
 */
export const BulkContact = CreateContactBody.omit({ fcm_token: true, apns_token: true }).extend({
  email: z.string().nullish(),
});

/** POST /contacts/bulk body. */
export const BulkBody = z.object({ contacts: z.array(BulkContact).min(1).max(1000) }).openapi("BulkContacts");

/** POST /contacts/bulk answer. */
export const BulkAnswer = z.object({
  created: z.array(Contact),
  skipped: z.array(z.object({ email: z.string(), external_id: z.string().nullable(), reason: z.string() })),
  errors: z.array(z.object({ email: z.string().nullable(), error: z.string() })),
  total_processed: z.number().int(),
  summary: z.object({
    created_count: z.number().int(),
    skipped_count: z.number().int(),
    error_count: z.number().int(),
  }),
}).openapi("BulkContactsResult");

const optionalText = z.string().max(255).nullable().optional();

/** PATCH …/device-token body: `{token, platform, …}` or `{fcm_token?, apns_token?, platform?}`. */
export const DeviceTokenBody = z.object({
  token: z.string().optional(),
  platform: z.enum(["android", "ios", "web"]).optional(),
  os_version: optionalText,
  app_version: optionalText,
  device_model: optionalText,
  fcm_token: z.string().optional(),
  apns_token: z.string().optional(),
}).superRefine((body, ctx) => {
  if (body.token === undefined && body.fcm_token === undefined && body.apns_token === undefined) {
    ctx.addIssue({ code: "custom", path: ["token"], message: "token should not be empty" });
    return;
  }
  if (body.token !== undefined && body.platform === undefined) {
    ctx.addIssue({ code: "custom", path: ["platform"], message: "platform should not be empty" });
    return;
  }
  const bad = (body.token !== undefined && !isValidDeviceToken(body.token)) ||
    (body.fcm_token !== undefined && !isValidDeviceToken(body.fcm_token)) ||
    (body.apns_token !== undefined && !isApnsToken(body.apns_token));
  if (bad) ctx.addIssue({ code: "custom", path: ["token"], message: INVALID_TOKEN });
}).openapi("DeviceTokenUpdate");

/** A registered device. */
export const DeviceToken = z.object({
  id: z.string(),
  token: z.string(),
  platform: z.enum(["android", "ios", "web"]),
  provider: z.enum(["fcm", "apns"]).openapi({ description: "The service that delivers to this device" }),
  os_version: z.string().nullable(),
  app_version: z.string().nullable(),
  device_model: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** The contact with its devices (device-token answer). */
export const ContactWithDevices = Contact.extend({ device_tokens: z.array(DeviceToken) }).openapi(
  "ContactWithDevices",
);

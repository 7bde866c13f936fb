import { z } from "@hono/zod-openapi";
import { MAX_EMAIL_LENGTH } from "../shared/email.ts";
import { isE164 } from "../shared/phone.ts";

/** Largest `metadata` kept with a session (it lives in one KV value). */
const MAX_METADATA_BYTES = 16_384;

const Channel = z.enum(["email", "sms", "whatsapp"], { error: "Valid channels are: email, sms, whatsapp" });

const phone = (field: string) =>
  z.string({ error: `${field} must be a string` }).refine(isE164, `${field} must be in E.164 format`);

const Recipients = z.object({
  email: z.email({ error: "recipients.email must be a valid email address" })
    .max(MAX_EMAIL_LENGTH, { error: "recipients.email must be a valid email address" }).optional(),
  sms: phone("recipients.sms").optional(),
  whatsapp: phone("recipients.whatsapp").optional(),
}).openapi("OtpRecipients");

const OtpConfig = z.object({
  otp_length: z.number().int().min(4).max(8).default(6),
  expiry_minutes: z.number().positive().max(1440).default(10),
  max_attempts: z.number().int().min(1).max(20).default(3),
}).openapi("OtpConfig");

/** Body of `POST /otp/send`. */
export const SendBody = z.object({
  channels: z.array(Channel).min(1).max(3),
  recipients: Recipients,
  config: OtpConfig.prefault({}),
  metadata: z.record(z.string(), z.unknown()).default({}),
  add_contact: z.boolean().default(false),
  sandbox_mode: z.boolean().default(false),
  verification_mode: z.enum(["any", "all"]).default("any"),
  /** Fill `{{first_name}}` / `{{last_name}}` of custom templates and the contact made by add_contact. */
  first_name: z.string().max(200).nullish(),
  last_name: z.string().max(200).nullish(),
}).superRefine((body, ctx) => {
  for (const channel of new Set(body.channels)) {
    if (!body.recipients[channel]) {
      ctx.addIssue({
        code: "custom",
        path: ["recipients", channel],
        message: `recipients.${channel} is required when the ${channel} channel is listed`,
      });
    }
  }
  if (new TextEncoder().encode(JSON.stringify(body.metadata)).length > MAX_METADATA_BYTES) {
    ctx.addIssue({
      code: "custom",
      path: ["metadata"],
      message: `metadata must be at most ${MAX_METADATA_BYTES} bytes`,
    });
  }
}).openapi("OtpSendRequest");

/** The validated send body. */
export type SendInput = z.infer<typeof SendBody>;

/** Any length: a token too long to be ours is 'Session not found', as any other (see readSessionToken). */
const token = {
  session_token: z.string().min(1).optional(),
  /** Alias of session_token accepted from existing clients. */
  token: z.string().min(1).optional(),
};

function requireToken(body: { session_token?: unknown; token?: unknown }, ctx: z.core.$RefinementCtx): void {
  // A token given but wrong (empty, not a string) is reported by its own field's check.
  if (body.session_token === undefined && body.token === undefined) {
    ctx.addIssue({ code: "custom", path: ["session_token"], message: "session_token should not be empty" });
  }
}

/** Runs requireToken also when another field is wrong, so one answer lists every problem. */
const evenWithOtherIssues = {
  when: (payload: z.core.ParsePayload) => typeof payload.value === "object" && payload.value !== null,
};

/** Body of `POST /otp/verify`: `token` is accepted for `session_token`. */
export const VerifyBody = z.object({
  ...token,
  otps: z.record(z.string(), z.string().max(32)).refine(
    (otps) => Object.keys(otps).length > 0,
    "otps should not be empty",
  ).refine((otps) => Object.keys(otps).length <= 3, "otps must hold at most 3 channels"),
}).superRefine(requireToken, evenWithOtherIssues).openapi("OtpVerifyRequest");

/** Body of `POST /otp/resend`. */
export const ResendBody = z.object(token).superRefine(requireToken, evenWithOtherIssues).openapi(
  "OtpResendRequest",
);

const ChannelSent = z.object({ success: z.boolean(), message_id: z.string() });
const ChannelResult = z.object({
  success: z.boolean(),
  trigger_id: z.string(),
  execution_id: z.string(),
  used_custom_template: z.boolean(),
});
const PerChannel = <T extends z.ZodType>(schema: T) => z.partialRecord(Channel, schema);

/** Answer of a send. */
export const SendResponse = z.object({
  success: z.literal(true),
  session_token: z.string(),
  /** The same token, under the name of the older response shape. */
  token: z.string(),
  session_id: z.string(),
  channels_sent: PerChannel(ChannelSent),
  channels_results: PerChannel(ChannelResult),
  expires_at: z.string(),
  verification_mode: z.enum(["any", "all"]),
  sandbox_otps: PerChannel(z.string()).optional(),
  data: z.object({
    session_id: z.string(),
    session_token: z.string(),
    expires_at: z.string(),
    channels: z.array(Channel),
    recipients: Recipients,
    otps: PerChannel(z.string()).optional(),
  }),
}).openapi("OtpSendResponse");

/** What a verify call found, at the top level of its answer and mirrored in `data`. */
const VerifyResult = z.object({
  verified: z.boolean(),
  verification_results: z.record(z.string(), z.object({ success: z.boolean() })),
  verified_channels: z.array(Channel),
  session_verified: z.boolean(),
  attempts_remaining: z.number().int(),
}).openapi("OtpVerifyResult");

const VerifyAnswer = VerifyResult.extend({
  all_channels_verified: z.boolean(),
  session_id: z.string(),
  expires_at: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  contact_id: z.string().optional(),
  data: VerifyResult,
});

/** Answer of a verify: at least one right code, or none ('Invalid OTP', one attempt used per wrong code). */
export const VerifyResponse = z.union([
  VerifyAnswer.extend({ success: z.literal(true), verified: z.literal(true) }).openapi("OtpVerified"),
  VerifyAnswer.extend({
    success: z.literal(false),
    verified: z.literal(false),
    message: z.literal("Invalid OTP"),
    code: z.literal("invalid_otp"),
  }).openapi("OtpInvalidCode"),
]).openapi("OtpVerifyResponse");

/** Answer of a resend. */
export const ResendResponse = z.object({
  success: z.literal(true),
  message: z.string(),
  expires_at: z.string(),
  channels_sent: PerChannel(ChannelSent),
  sandbox_otps: PerChannel(z.string()).optional(),
}).openapi("OtpResendResponse");

/** Shape A error body (with the extra fields some OTP errors carry). */
export const OtpError = z.object({
  statusCode: z.number().int(),
  message: z.union([z.string(), z.array(z.string())]),
  error: z.string(),
  code: z.string(),
  attempts_remaining: z.number().int().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
}).openapi("OtpError");

/**
 * The providers a team's own channel account may use, per channel, and the credentials each takes:
 * strict schemas (an unknown field is a mistake worth a 400, not a silent drop), the fields that are
 * secret, and how they are masked when read back.
 */
import { z } from "@hono/zod-openapi";
import type { Channel } from "./types.ts";

/** Which providers can carry which channel. */
export const PROVIDERS_BY_CHANNEL = {
  sms: ["twilio", "vonage"],
  whatsapp: ["twilio"],
  email: ["resend", "ses", "smtp"],
  push: ["fcm", "apns"],
} as const satisfies Record<Channel, readonly string[]>;

/** A provider a channel account may name. */
export type AccountProviderName = (typeof PROVIDERS_BY_CHANNEL)[Channel][number];

const text = (max = 200) => z.string().trim().min(1).max(max);
/** A sender this account sends from instead of the team's identity (another provider's number, say). */
const from = text(320).optional().openapi({ description: "Sender for this account (else the team's identity)" });
const pem = z.string().max(10_000).refine((v) => v.replaceAll("\\n", "\n").includes("-----BEGIN PRIVATE KEY-----"), {
  error: "credentials.private_key must be a PKCS#8 PEM key (-----BEGIN PRIVATE KEY-----)",
});

/** Each provider's credentials. */
export const CREDENTIAL_SCHEMAS = {
  twilio: z.strictObject({
    account_sid: z.string().regex(/^AC[0-9a-fA-F]{32}$/, {
      error: "credentials.account_sid must be AC followed by 32 hex digits",
    }),
    auth_token: text(128),
    from,
  }).openapi("TwilioCredentials"),
  vonage: z.strictObject({ api_key: text(64), api_secret: text(128), from }).openapi("VonageCredentials"),
  resend: z.strictObject({
    api_key: z.string().regex(/^re_[A-Za-z0-9_]{8,200}$/, {
      error: "credentials.api_key must be a Resend API key (re_…)",
    }),
    from,
  }).openapi("ResendCredentials"),
  ses: z.strictObject({
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, {
      error: "credentials.region must be an AWS region such as us-east-1",
    }),
    access_key_id: z.string().regex(/^(AKIA|ASIA)[A-Z0-9]{12,124}$/, {
      error: "credentials.access_key_id must be an AWS access key id (AKIA…)",
    }),
    secret_access_key: text(128),
    configuration_set: text(64).optional(),
    from,
  }).openapi("SesCredentials"),
  smtp: z.strictObject({
    host: z.string().regex(/^[A-Za-z0-9.-]{1,253}$/, { error: "credentials.host must be a host name or IPv4 address" }),
    port: z.number().int().min(1).max(65_535).default(587),
    /** Implicit TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
    secure: z.boolean().optional(),
    username: text(320).optional(),
    password: text(512).optional(),
    from,
  }).openapi("SmtpCredentials"),
  fcm: z.strictObject({
    project_id: text(128),
    client_email: z.email().max(320),
    private_key: pem,
    private_key_id: text(128).optional(),
    token_uri: z.url().max(2048).optional(),
  }).openapi("FcmCredentials"),
  apns: z.strictObject({
    team_id: text(32),
    key_id: text(32),
    private_key: pem,
    bundle_id: text(255),
  }).openapi("ApnsCredentials"),
} satisfies Record<AccountProviderName, z.ZodType>;

/** The credentials of one provider, as validated. */
export type CredentialsOf<P extends AccountProviderName> = z.infer<(typeof CREDENTIAL_SCHEMAS)[P]>;

/** Fields never shown back, never logged. */
export const SECRET_FIELDS: Record<AccountProviderName, readonly string[]> = {
  twilio: ["auth_token"],
  vonage: ["api_secret"],
  resend: ["api_key"],
  ses: ["secret_access_key"],
  smtp: ["password"],
  fcm: ["private_key"],
  apns: ["private_key"],
};

/**
 * The credentials as GET shows them: each secret replaced by `****` and, for a token long enough that
 * four characters give nothing away, its last four (so an operator can tell which token is set).
 */
export function maskCredentials(provider: AccountProviderName, credentials: Record<string, unknown>) {
  const masked: Record<string, unknown> = { ...credentials };
  for (const field of SECRET_FIELDS[provider]) {
    const value = credentials[field];
    if (typeof value !== "string") continue;
    masked[field] = value.length >= 24 && !value.includes("-----") ? `****${value.slice(-4)}` : "****";
  }
  return masked;
}

/** True when `provider` can carry `channel`. */
export function carries(channel: Channel, provider: string): provider is AccountProviderName {
  return (PROVIDERS_BY_CHANNEL[channel] as readonly string[]).includes(provider);
}

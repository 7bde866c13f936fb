import { z } from "@hono/zod-openapi";
import { MAX_SEND_TAGS, MAX_TAG_LENGTH, RecordId } from "../../shared/http/schemas.ts";
import { tag } from "../../shared/http/openapi.ts";

/** The channels, as admin paths and filters name them. */
export const ChannelSchema = z.enum(["email", "sms", "whatsapp", "push"]);

/**
 * `{team_id}` of a path: any string (not too long), so that a malformed id is 404 'Team not found'
 * like an unknown one.
 */
export const TeamParam = z.object({
  team_id: RecordId.openapi({ param: { name: "team_id", in: "path" }, format: "uuid" }),
});

const Plan = z.enum(["free", "pro", "plus", "enterprise"]);

/** `POST /teams` body. */
export const CreateTeamBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  plan: Plan.optional(),
}).openapi("AdminCreateTeam");

/** A team as the admin API shows it. */
export const TeamSchema = z.object({ id: z.string(), name: z.string(), plan: Plan }).openapi("AdminTeam");

/** `GET /teams` query: a page of teams. */
export const TeamListQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** `GET /teams` answer: teams with their keys' prefixes and kinds (a key itself is never kept). */
export const TeamList = z.object({
  teams: z.array(z.object({
    id: z.string(),
    name: z.string(),
    plan: Plan,
    created_at: z.string(),
    keys: z.array(z.object({
      prefix: z.string(),
      kind: z.enum(["sk_live", "sk_test", "pk_live", "pk_test"]),
      created_at: z.string(),
      revoked_at: z.string().nullable(),
    })),
  })),
  total: z.number(),
  page: z.number(),
  limit: z.number(),
}).openapi("AdminTeamList");

/** `POST /teams` answer: the team and its keys (shown only here). */
export const CreatedTeam = z.object({
  team: TeamSchema,
  keys: z.object({ live: z.string(), test: z.string(), publishable: z.string() }),
}).openapi("AdminCreatedTeam");

/** `POST /teams/{team_id}/keys` body. */
export const CreateKeyBody = z.strictObject({ kind: z.enum(["live", "test", "publishable", "publishable_test"]) })
  .openapi(
    "AdminCreateKey",
  );

/** A new key (shown only here) and the prefix that names it for revocation. */
export const CreatedKey = z.object({ key: z.string(), prefix: z.string() }).openapi("AdminCreatedKey");

/** `DELETE /keys/{prefix}` answer. */
export const RevokedKey = z.object({ revoked: z.boolean(), prefix: z.string() }).openapi("AdminRevokedKey");

/** `POST /teams/{team_id}/wallet/topup` body: USD, at least one micro-dollar (the wallet's unit; less would add nothing). */
export const TopUpBody = z.strictObject({ amount: z.number().min(0.000001).max(1_000_000_000) }).openapi("AdminTopUp");

/** A wallet balance in USD. */
export const Balance = z.object({ balance: z.number() }).openapi("AdminBalance");

/** `GET /teams/{team_id}/wallet` answer: balance and latest ledger entries, newest first. */
export const WalletSchema = z.object({
  balance: z.number(),
  currency: z.string(),
  transactions: z.array(z.object({
    id: z.number(),
    kind: z.enum(["topup", "charge", "refund"]),
    amount: z.number(),
    balance_after: z.number(),
    reference: z.string().nullable(),
    description: z.string().nullable(),
    created_at: z.string(),
  })),
}).openapi("AdminWallet");

const status = z.enum(["approved", "pending"]).optional();
const text = z.string().min(1);

/** Template bodies per channel: a field of another channel is 400. */
export const TemplateBodies = {
  email: z.strictObject({ subject: text, html: text, text: z.string().optional(), status }).openapi(
    "AdminEmailTemplate",
  ),
  sms: z.strictObject({
    body: text,
    country_variations: z.record(z.string(), text)
      // {} would serve no country at all (the body serves every country only without variations).
      .refine((v) => Object.keys(v).length > 0, "country_variations should not be empty")
      .refine(
        (v) => Object.keys(v).every((country) => /^[A-Za-z]{2}$/.test(country)),
        "country_variations keys must be ISO 3166-1 alpha-2 country codes",
      )
      .transform((v) => Object.fromEntries(Object.entries(v).map(([country, body]) => [country.toUpperCase(), body])))
      .optional(),
    status,
  }).openapi("AdminSmsTemplate"),
  whatsapp: z.strictObject({ body: text, category: z.enum(["MARKETING", "UTILITY", "AUTHENTICATION"]), status })
    .openapi("AdminWhatsappTemplate"),
  push: z.strictObject({ title: text, body: text, status }).openapi("AdminPushTemplate"),
} as const;

/** A stored template. */
export const TemplateSchema = z.object({
  id: z.string(),
  team_id: z.string(),
  channel: ChannelSchema,
  key: z.string(),
  subject: z.string().nullable(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  title: z.string().nullable(),
  body: z.string().nullable(),
  category: z.enum(["MARKETING", "UTILITY", "AUTHENTICATION"]).nullable(),
  country_variations: z.record(z.string(), z.string()).nullable(),
  status: z.enum(["approved", "pending", "rejected"]),
  created_at: z.string(),
  updated_at: z.string(),
}).openapi("AdminTemplate");

const country = z.string().regex(/^[A-Za-z]{2}$/, "countries must be ISO 3166-1 alpha-2 country codes")
  .transform((c) => c.toUpperCase());

/** `PUT /teams/{team_id}/identities/{channel}/{identity_id}` body. */
export const IdentityBody = z.strictObject({
  from: z.string().trim().min(1).max(320),
  name: z.string().max(200).nullable().optional(),
  countries: z.array(country).nullable().optional(),
  is_default: z.boolean().optional(),
}).openapi("AdminIdentityInput");

/** A sender identity. */
export const IdentitySchema = z.object({
  id: z.string(),
  team_id: z.string(),
  channel: ChannelSchema,
  from: z.string(),
  name: z.string().nullable(),
  countries: z.array(z.string()).nullable(),
  is_default: z.boolean(),
}).openapi("AdminIdentity");

/** `PUT /teams/{team_id}/domains/{domain}` body. */
export const DomainBody = z.strictObject({ verified: z.boolean() }).openapi("AdminDomainInput");

/** An email domain of a team. */
export const DomainSchema = z.object({ domain: z.string(), verified: z.boolean() }).openapi("AdminDomain");

/** A segment's tags, bounded as a send's: its filter travels in every job of a send to it. */
const tags = z.array(z.string().trim().min(1).max(MAX_TAG_LENGTH)).min(1).max(MAX_SEND_TAGS);

/** `PUT /teams/{team_id}/segments/{segment_id}` body. */
export const SegmentBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  filter: z.strictObject({ tags_all: tags.optional(), tags_any: tags.optional(), is_active: z.boolean().optional() }),
}).openapi("AdminSegmentInput");

/** A stored segment. */
export const SegmentSchema = z.object({
  id: z.string(),
  team_id: z.string(),
  name: z.string(),
  filter: z.object({
    tags_all: z.array(z.string()).optional(),
    tags_any: z.array(z.string()).optional(),
    is_active: z.boolean().optional(),
  }),
  created_at: z.string(),
  updated_at: z.string(),
}).openapi("AdminSegment");

/** Filters of the outbox (read and clear). */
export const OutboxFilter = z.object({
  to: z.string().min(1).optional(),
  channel: ChannelSchema.optional(),
  team_id: z.uuid().optional(),
});

/** `GET /outbox` query. */
export const OutboxQuery = OutboxFilter.extend({
  limit: z.coerce.number().int().min(1).max(1000).default(50),
});

/** `GET /outbox` answer: newest first. */
export const OutboxList = z.object({
  messages: z.array(z.object({
    id: z.string(),
    team_id: z.string(),
    channel: z.string(),
    to: z.string(),
    subject: z.string().nullable(),
    body: z.string().nullable(),
    trigger_id: z.string().nullable(),
    created_at: z.string(),
  })),
}).openapi("AdminOutbox");

/** `DELETE /outbox` answer. */
export const OutboxCleared = z.object({ deleted: z.number() }).openapi("AdminOutboxCleared");

/** Shape A error, as the admin routes document it. */
export const ErrorSchema = z.object({
  statusCode: z.number(),
  message: z.union([z.string(), z.array(z.string())]),
  error: z.string(),
  code: z.string(),
}).openapi("AdminError");

const errorContent = { "application/json": { schema: ErrorSchema } };

/** 400 of the admin routes. */
export const BadRequest = { description: "Invalid request", content: errorContent };
/** 401 of the admin routes. */
export const Unauthorized = { description: "Missing or wrong admin token", content: errorContent };
/** 404 of the admin routes. */
export const NotFound = { description: "Not found", content: errorContent };

/** What every admin route declares: its tag and the admin token security scheme. */
export const ADMIN = { tags: tag("Admin"), security: [{ AdminToken: [] }] };

import { z } from "zod";

const bool = z
  .enum(["1", "0", "true", "false", "yes", "no"])
  .transform((v) => v === "1" || v === "true" || v === "yes");
const int = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
const num = (fallback: number) => z.coerce.number().nonnegative().default(fallback);

/** Every setting the service reads from its environment, with its default. */
const ConfigSchema = z.object({
  PORT: int(8000),
  HOST: z.string().default("0.0.0.0"),
  DATABASE_URL: z.string().optional(),
  /**
   * Where the queue and the hot state (OTP sessions, rate-limit windows, idempotency records …) live:
   * `kv` (Deno KV, one process per KV file) or `postgres` (the database of DATABASE_URL, shared by replicas).
   */
  ENGINE: z.enum(["kv", "postgres"]).default("kv"),
  /** Folder of the embedded Postgres; `memory://` keeps it in memory. */
  PGLITE_DIR: z.string().default("./.data/pg"),
  KV_PATH: z.string().default("./.data/kv.sqlite3"),
  /** Set by Deno Deploy: KV is then the platform's managed database, opened with no path. */
  DENO_DEPLOYMENT_ID: z.string().optional(),
  /**
   * With ENGINE=postgres, a `Deno.cron` drains the queue once a minute (worker/drain.ts), for hosts
   * that run an instance only while it has traffic. Unset: on when DENO_DEPLOYMENT_ID is set.
   */
  QUEUE_DRAIN_CRON: bool.optional(),
  ADMIN_TOKEN: z.string().min(16).optional(),
  DEMO_SEED: bool.default(true),
  OTP_TOKEN_SECRET: z.string().min(16).optional(),
  TRUST_PROXY: bool.default(false),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),

  RATE_LIMIT_FREE: int(100),
  RATE_LIMIT_PRO: int(10_000),
  RATE_LIMIT_PLUS: int(50_000),
  RATE_LIMIT_ENTERPRISE: int(1_000_000),

  EMAIL_FROM: z.string().default("no-reply@example.com"),
  EMAIL_FROM_NAME: z.string().default("Messaging"),
  SMS_FROM: z.string().default("+15005550006"),
  WHATSAPP_FROM: z.string().default("+15005550006"),
  PUSH_APP: z.string().default("default"),

  /**
   * Charge live-key messages that go to the outbox for want of a provider, as if a provider sent them
   * (tests and billing demos); off, they are free and their record says why.
   */
  BILL_OUTBOX: bool.default(false),
  RESEND_API_KEY: z.string().optional(),
  RESEND_BASE_URL: z.string().url().optional(),
  TWILIO_ACCOUNT_SID: z.string().optional(),
  TWILIO_AUTH_TOKEN: z.string().optional(),
  TWILIO_BASE_URL: z.string().url().optional(),
  FCM_SERVICE_ACCOUNT: z.string().optional(),
  FCM_BASE_URL: z.string().url().optional(),
  APNS_TEAM_ID: z.string().optional(),
  APNS_KEY_ID: z.string().optional(),
  APNS_PRIVATE_KEY: z.string().optional(),
  APNS_BUNDLE_ID: z.string().optional(),
  APNS_BASE_URL: z.string().url().optional(),
  /**
   * AES-256 key (base64 of 32 bytes) that encrypts the credentials of teams' own channel accounts
   * (shared/channel_accounts.ts); without it they cannot be stored.
   */
  CHANNEL_ACCOUNTS_KEY: z.string().refine((v) => isBase64Key(v), {
    error: "must be the base64 of 32 random bytes (openssl rand -base64 32)",
  }).optional(),

  PRICE_SMS_SEGMENT: num(0.0075),
  PRICE_WHATSAPP_MARKETING: num(0.025),
  PRICE_WHATSAPP_UTILITY: num(0.004),
  PRICE_WHATSAPP_AUTHENTICATION: num(0.0035),
  PRICE_EMAIL: num(0),
  PRICE_PUSH: num(0),
  PRICE_OTP_VERIFICATION: num(0.005),

  /** OTP sends per recipient in 5 minutes, per client IP in an hour, and active sessions per team. */
  OTP_RECIPIENT_LIMIT: int(5),
  OTP_IP_LIMIT_PER_HOUR: int(20),
  OTP_ACTIVE_SESSION_LIMIT: int(100),

  /** Outbound webhooks: allow private/loopback targets (tests only), retry wait multiplier, request timeout. */
  WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  WEBHOOK_RETRY_SCALE: num(1),
  WEBHOOK_TIMEOUT_MS: int(10_000),
  WEBHOOK_SLOT_WAIT_MS: int(2_000),
  /** Signing secret (`whsec_…`) of the Resend webhook that posts to /api/v1/inbound/resend. */
  RESEND_WEBHOOK_SECRET: z.string().optional(),
  /**
   * The service's public base URL (behind a proxy): Twilio's signature of the URL it called is checked
   * against it, and Twilio sends ask for status callbacks on it.
   */
  PUBLIC_URL: z.string().url().optional(),
  /** When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().optional(),
  /** How long a graceful shutdown waits for in-flight requests and jobs. */
  SHUTDOWN_TIMEOUT_MS: int(10_000),

  /** Multi-channel triggers per minute on the enterprise plan (free 10, pro 100, plus 500 are fixed). */
  TRIGGER_RATE_LIMIT_ENTERPRISE: int(5_000),
  /**
   * Opt-in: while this process accepts more than SEND_DEFER_RATE sends and events a second, the group
   * jobs it accepts wait in the spool (shared/engine/kv/spool.ts) and its worker holds them until the
   * burst ends (each second's jobs at most SEND_DEFER_MAX_MS). Off (0) by default: it trades the
   * latency of real sends for accept rate, and measured it bought none (docs/sending.md, "Bursts").
   */
  SEND_DEFER_RATE: int(0),
  SEND_DEFER_MAX_MS: int(10_000),
  /**
   * Promotional push to a tag, a segment or all goes out at most at this many contacts a second per
   * team (its batches spread over time; transactional push is never held); 0 turns this off.
   */
  PUSH_PROMOTIONAL_RATE: int(1_000),
  /**
   * Contacts a page of a fan-out holds (one `deliver-batch` job each), and of a workflow's tag or all
   * start; 0 chooses by database (see worker/recipients.ts, pageSize).
   */
  FANOUT_PAGE_SIZE: z.coerce.number().int().min(0).max(10_000).default(0),
});

/** True when `text` is the standard base64 of exactly 32 bytes (an AES-256 key). */
export function isBase64Key(text: string): boolean {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text)) return false;
  try {
    return atob(text).length === 32;
  } catch {
    return false;
  }
}

/** The parsed configuration. */
export type Config = z.infer<typeof ConfigSchema>;

/** What stops the start in the choice of engine, one entry per variable at fault. */
function engineProblems(config: Config): { variable: string; message: string }[] {
  // The embedded Postgres belongs to one process: replicas that share hot state need a server.
  if (config.ENGINE === "postgres" && !config.DATABASE_URL) {
    return [{
      variable: "ENGINE",
      message: "ENGINE=postgres needs DATABASE_URL, the Postgres server the replicas share",
    }];
  }
  // The drain works the pg-boss queue; Deno KV's queue wakes its listener by itself.
  if (config.QUEUE_DRAIN_CRON && config.ENGINE !== "postgres") {
    return [{
      variable: "QUEUE_DRAIN_CRON",
      message: "QUEUE_DRAIN_CRON drains the pg-boss queue: it needs ENGINE=postgres",
    }];
  }
  return [];
}

/** Parses an environment into a Config, failing with one line per bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ""),
  );
  const result = ConfigSchema.safeParse(cleaned);
  const problems = result.success ? engineProblems(result.data) : result.error.issues.map((i) => ({
    variable: i.path.join("."),
    message: i.message,
  }));
  if (!result.success || problems.length > 0) {
    const lines = problems.map((p) => `  ${p.variable}: ${p.message}`);
    throw new Error(`Cannot start: invalid configuration\n${lines.join("\n")}`);
  }
  return result.data;
}

/** Reads the process environment once; the only place that touches Deno.env. */
export function loadConfig(): Config {
  return parseConfig(Deno.env.toObject());
}

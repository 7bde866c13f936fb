/** The channels a message can travel on. */
export type Channel = "email" | "sms" | "whatsapp" | "push";

/** A fully rendered message, ready for one provider call. */
export interface OutboundMessage {
  /** Our message id (ulid); providers may use it as an idempotency key. */
  id: string;
  teamId: string;
  channel: Channel;
  /** Email address, E.164 phone number, or push device token. */
  to: string;
  /** Sender: email address, SMS sender id / number, WhatsApp number, push app id. */
  from?: string;
  /** Display name of the email sender. */
  fromName?: string;
  replyTo?: string;
  /** Email subject. */
  subject?: string;
  /** Email HTML body. */
  html?: string;
  /** Email plain-text body; SMS, WhatsApp and push body. */
  text?: string;
  /** Push title. */
  title?: string;
  /** Push platform of the device token. */
  platform?: "android" | "ios" | "web";
  /** The push service that delivers the token (else derived from the token and platform). */
  pushService?: "fcm" | "apns";
  imageUrl?: string;
  clickAction?: string;
  actions?: { title: string; action: string; icon?: string }[];
  /** Push custom data (string values, as FCM requires). */
  data?: Record<string, string>;
  /** Push priority: transactional is high, promotional normal. */
  priority?: "high" | "normal";
  triggerId?: string;
}

/** What a provider answers for an accepted message. */
export interface SendResult {
  providerMessageId: string;
}

/** A provider refused or failed a message. */
export class ProviderError extends Error {
  /** True when the provider says a retry may succeed (429, 5xx, network). */
  readonly temporary: boolean;
  /** True when the push token is invalid or unregistered and should be removed. */
  readonly invalidToken: boolean;
  /** The provider's own error code, when it gave one. */
  readonly providerCode?: string;
  /** How long the provider asked to wait before trying again (its Retry-After), when it said. */
  readonly retryAfterMs?: number;
  /**
   * True when the request left us and no answer came back (a timeout, a connection dropped
   * mid-request): the provider may have taken the message. Another provider must then not be handed
   * it, or the recipient could get it twice (shared/providers/failover.ts).
   */
  readonly maybeAccepted: boolean;

  constructor(
    message: string,
    options: {
      temporary?: boolean;
      invalidToken?: boolean;
      providerCode?: string;
      retryAfterMs?: number;
      maybeAccepted?: boolean;
    } = {},
  ) {
    super(message);
    this.name = "ProviderError";
    this.temporary = options.temporary ?? false;
    this.invalidToken = options.invalidToken ?? false;
    this.providerCode = options.providerCode;
    this.retryAfterMs = options.retryAfterMs;
    this.maybeAccepted = options.maybeAccepted ?? false;
  }
}

/**
 * What became of one hand-over to a provider: `sent` (it took the message), `refused` (a final no:
 * an invalid number, a bad sender), `temporary` (it certainly did not take it: connection refused,
 * a 429 or 5xx answered before acceptance) or `unknown` (it may have taken it).
 */
export type SendOutcome = "sent" | "refused" | "temporary" | "unknown";

/**
 * The outcome of a failed send. An error that is not a ProviderError (a bug, an SDK surprise) is
 * `unknown`: nothing says the provider did not take the message.
 */
export function failureOutcome(error: unknown): Exclude<SendOutcome, "sent"> {
  if (!(error instanceof ProviderError)) return "unknown";
  if (error.maybeAccepted) return "unknown";
  return error.temporary ? "temporary" : "refused";
}

/**
 * A failed `fetch` (or an HTTP client's network error) as a ProviderError: temporary either way, and
 * `maybeAccepted` unless the connection was never made (refused, no such host), since a timeout or a
 * reset may come after the provider read the request.
 */
export function networkFailure(context: string, error: unknown): ProviderError {
  // Deno's fetch says "fetch failed" and keeps the reason in `cause` (one or two levels down).
  let text = "";
  for (let e: unknown = error, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    text += ` ${(e as Error).message ?? e} ${(e as { code?: unknown }).code ?? ""}`;
  }
  const neverConnected = NEVER_CONNECTED.test(text);
  return new ProviderError(`${context}: ${(error as Error)?.message ?? error}`, {
    temporary: true,
    maybeAccepted: !neverConnected,
  });
}

/** Error texts (Deno's fetch, Node's errno codes) of a connection that was never made. */
const NEVER_CONNECTED =
  /connection refused|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|dns error|failed to lookup address/i;

/** A Retry-After header (seconds, or an HTTP date) in milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  // Seconds are digits only; an HTTP date has a weekday and month names ("-5" would parse as a year).
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : /^[A-Za-z]{3}, /.test(text) ? Date.parse(text) - now : NaN;
  return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

/** One way out for messages of one or more channels. */
export interface Provider {
  readonly name: string;
  /**
   * True when handing the same message (same `id`) over again cannot reach its recipient twice:
   * Resend keys each email by its id; APNs and FCM collapse a push by its id, so a device shows it
   * once. False for Twilio, which has no idempotency key: a message it may have taken before a
   * crash is failed with the reason rather than sent again (worker/handoff.ts).
   */
  readonly resendable: boolean;
  send(message: OutboundMessage): Promise<SendResult>;
  /**
   * A provider that is not `resendable` and keeps a log of the messages it took: the ids of those
   * in its log that match `message` (recipient, sender, body) and were created within `window`,
   * oldest first. Throws when the log cannot be read.
   */
  find?(message: OutboundMessage, window: LogWindow): Promise<string[]>;
}

/** When a message may have reached a provider (ms since the epoch). */
export interface LogWindow {
  since: number;
  until: number;
}

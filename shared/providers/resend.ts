/** Email through Resend, with the official `resend` SDK. */
import { Resend } from "resend";
import { formatSender } from "../email.ts";
import { type OutboundMessage, type Provider, ProviderError, retryAfterMs, type SendResult } from "./types.ts";

/** Options of {@linkcode createResendProvider}. */
export interface ResendProviderOptions {
  apiKey: string;
  /** API base URL; a fake server's in tests. */
  baseUrl?: string;
  /** How long a request may take (ms) before it is tried again later (the SDK has no limit of its own). */
  timeoutMs?: number;
}

const DEFAULT_BASE_URL = "https://api.resend.com";
/** Resend's 429s that wait for a new day or month ("Upgrade your plan … or wait until 24 hours have passed"). */
const QUOTA_SPENT = new Set(["daily_quota_exceeded", "monthly_quota_exceeded"]);

/** Creates the email provider that sends through Resend. */
export function createResendProvider(options: ResendProviderOptions): Provider {
  // The SDK takes its base URL as a constructor option. It is always passed, so the SDK never falls
  // back to its own `RESEND_BASE_URL` lookup in the environment (config reads the environment).
  const resend = new Resend(options.apiKey, { baseUrl: options.baseUrl ?? DEFAULT_BASE_URL });
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    name: "resend",
    // The idempotency key below: Resend answers a second request with the same id without sending.
    resendable: true,
    async send(message: OutboundMessage): Promise<SendResult> {
      if (!message.from) {
        throw new ProviderError("Cannot send email: no sender address");
      }
      // Resend's types want at least one of html and text.
      const content = message.html !== undefined
        ? { html: message.html, text: message.text }
        : { text: message.text ?? "" };
      const signal = AbortSignal.timeout(timeoutMs);
      const { data, error, headers } = await resend.emails.send({
        from: formatSender(message.from, message.fromName),
        to: message.to,
        subject: message.subject ?? "",
        replyTo: message.replyTo,
        ...content,
      }, { idempotencyKey: message.id, signal });
      // The SDK turns an aborted request into its "Unable to fetch data" error. Trying again is safe:
      // the idempotency key makes Resend answer a second request for this message without sending it.
      if (error && signal.aborted) {
        throw new ProviderError(`Cannot send email: Resend did not answer within ${timeoutMs} ms`, {
          temporary: true,
          maybeAccepted: true,
        });
      }
      if (error) {
        // statusCode is null when the request never got an answer (network failure), and missing when
        // the answer's JSON body does not carry it (the SDK copies it from the body, not the response:
        // a gateway's 502 or 503 in front of the API). Either way the cause is not the message, and
        // the idempotency key makes a retry safe.
        const status = error.statusCode as number | null | undefined;
        // A 409 concurrent_idempotent_requests means the same message is still being sent: retry. A
        // 429 is a rate limit, except a spent daily or monthly quota, which no retry of ours outlasts.
        const temporary = typeof status !== "number" || (status === 429 && !QUOTA_SPENT.has(error.name)) ||
          status >= 500 || error.name === "concurrent_idempotent_requests";
        throw new ProviderError(`Cannot send email: ${error.message}`, {
          temporary,
          // No status of Resend's own: the SDK hides whether the request ever reached it.
          maybeAccepted: typeof status !== "number",
          providerCode: error.name,
          retryAfterMs: temporary ? retryAfterMs(headers?.["retry-after"]) : undefined,
        });
      }
      return { providerMessageId: data.id };
    },
  };
}

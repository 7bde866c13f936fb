/** Email through Amazon SES (API v2), with the AWS SDK v3 client `@aws-sdk/client-sesv2`. */
import { SendEmailCommand, SESv2Client } from "@aws-sdk/client-sesv2";
import { formatSender } from "../email.ts";
import { networkFailure, type OutboundMessage, type Provider, ProviderError, type SendResult } from "./types.ts";

/** Options of {@linkcode createSesProvider}. */
export interface SesProviderOptions {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Configuration set named on every email (event publishing, dedicated IPs). */
  configurationSet?: string;
  /** API endpoint (instead of `https://email.{region}.amazonaws.com`); a fake server's in tests. */
  baseUrl?: string;
  /** How long a request may take (ms). */
  timeoutMs?: number;
}

/**
 * SES errors a later try may get past: throttling (429) and SES being unavailable. Every other one
 * (MessageRejected, MailFromDomainNotVerified, AccountSuspended, SendingPaused, BadRequest, a
 * signature the key does not match…) is final for this message and account.
 */
const RETRYABLE = new Set(["TooManyRequestsException", "LimitExceededException", "ServiceUnavailable", "Throttling"]);

/** Creates the email provider that sends through an SES account. */
export function createSesProvider(options: SesProviderOptions): Provider {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const client = new SESv2Client({
    region: options.region,
    // Given outright, so that the SDK never looks for credentials in the environment or in files.
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
    endpoint: options.baseUrl,
    // One try: retrying is the queue's call, and failover needs to know the first answer.
    maxAttempts: 1,
    requestHandler: { connectionTimeout: timeoutMs, requestTimeout: timeoutMs },
  });
  return {
    name: "ses",
    // SES has no idempotency key: a message handed over twice may be sent twice.
    resendable: false,
    async send(message: OutboundMessage): Promise<SendResult> {
      if (!message.from) throw new ProviderError("Cannot send email: no sender address");
      try {
        const answer = await client.send(
          new SendEmailCommand({
            FromEmailAddress: formatSender(message.from, message.fromName),
            Destination: { ToAddresses: [message.to] },
            ReplyToAddresses: message.replyTo ? [message.replyTo] : undefined,
            ConfigurationSetName: options.configurationSet,
            Content: {
              Simple: {
                Subject: { Data: message.subject ?? "", Charset: "UTF-8" },
                Body: {
                  ...(message.html !== undefined ? { Html: { Data: message.html, Charset: "UTF-8" } } : {}),
                  ...(message.text !== undefined || message.html === undefined
                    ? { Text: { Data: message.text ?? "", Charset: "UTF-8" } }
                    : {}),
                },
              },
            },
          }),
          { abortSignal: AbortSignal.timeout(timeoutMs) },
        );
        if (!answer.MessageId) {
          throw new ProviderError("Cannot send email: SES answered no MessageId", { maybeAccepted: true });
        }
        return { providerMessageId: answer.MessageId };
      } catch (error) {
        throw toProviderError(error);
      }
    },
  };
}

/** An SES answer, or its absence, as a ProviderError. */
function toProviderError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  if (typeof status === "number") {
    const temporary = status === 429 || status === 503 || RETRYABLE.has(e.name ?? "");
    return new ProviderError(`Cannot send email: SES ${e.name}: ${e.message}`, {
      temporary,
      // A 500 (InternalFailure), 502 or 504 may come after SES queued the message.
      maybeAccepted: status >= 500 && status !== 503,
      providerCode: e.name,
    });
  }
  if (e.name === "AbortError" || e.name === "TimeoutError") {
    return new ProviderError("Cannot send email: SES did not answer in time", { temporary: true, maybeAccepted: true });
  }
  return networkFailure("Cannot send email", error);
}

/** SMS through Vonage's SMS API, with the official `@vonage/sms` SDK. */
import { Auth } from "@vonage/auth";
import { SMS } from "@vonage/sms";
import { networkFailure, type OutboundMessage, type Provider, ProviderError, type SendResult } from "./types.ts";

/** Options of {@linkcode createVonageProvider}. */
export interface VonageProviderOptions {
  apiKey: string;
  apiSecret: string;
  /** REST base URL (instead of `https://rest.nexmo.com`); a fake server's in tests. */
  baseUrl?: string;
  /** How long a request may take (ms); the SDK has no limit of its own. */
  timeoutMs?: number;
}

/**
 * Vonage's per-message statuses (in a 200 answer) that a later try may get past: 1 Throttled, 5
 * Internal Error ("retry"). Every other one is about the message, the number or the account, and
 * final: 2/3 missing or invalid parameters, 4 bad credentials, 6 invalid message, 7 number barred,
 * 8 partner account barred, 9 partner quota exceeded, 15 invalid sender, 29 non-whitelisted destination.
 */
const RETRYABLE_STATUSES = new Set(["1", "5"]);

/** Creates the SMS provider that sends through a Vonage account. */
export function createVonageProvider(options: VonageProviderOptions): Provider {
  // An empty private key (SMS signs with the key and secret, not a JWT): the SDK looks a missing one up
  // as a file name, which Node's fs warns about on every process start.
  const auth = new Auth({ apiKey: options.apiKey, apiSecret: options.apiSecret, privateKey: "" });
  const client = new SMS(auth, {
    restHost: (options.baseUrl ?? "https://rest.nexmo.com").replace(/\/+$/, ""),
    timeout: options.timeoutMs ?? 30_000,
  });
  return {
    name: "vonage",
    // No idempotency key: a message handed over twice may reach its recipient twice.
    resendable: false,
    async send(message: OutboundMessage): Promise<SendResult> {
      if (message.channel !== "sms") throw new ProviderError(`Cannot send ${message.channel} with Vonage`);
      if (!message.from) throw new ProviderError("Cannot send sms: no sender");
      try {
        // Vonage wants numbers without the leading +.
        const answer = await client.send({
          to: message.to.replace(/^\+/, ""),
          from: message.from.replace(/^\+/, ""),
          text: message.text ?? "",
          clientRef: message.id,
        });
        const id = answer.messages[0]?.messageId;
        // A 200 without an id took the message all the same: its id is unknown, not its fate.
        return { providerMessageId: id ?? `vonage:${message.id}` };
      } catch (error) {
        throw toProviderError(error);
      }
    },
  };
}

/** Vonage's answer, or its absence, as a ProviderError. */
function toProviderError(error: unknown): ProviderError {
  // The SDK's MessageSendAllFailure: a 200 answer whose message has a non-zero status.
  const failed = (error as { response?: { messages?: { status?: string; errorText?: string }[] } }).response
    ?.messages?.find((m) => m.status !== "0");
  if (failed?.status) {
    return new ProviderError(`Cannot send sms: Vonage status ${failed.status} ${failed.errorText ?? ""}`.trimEnd(), {
      temporary: RETRYABLE_STATUSES.has(failed.status),
      providerCode: failed.status,
    });
  }
  // The SDK's VetchError: an HTTP error status (a gateway in front of the API, an outage).
  const status = (error as { response?: { status?: unknown } }).response?.status;
  if (typeof status === "number") {
    const temporary = status === 429 || status === 503;
    return new ProviderError(`Cannot send sms: Vonage answered ${status}`, {
      temporary,
      // A 500, 502 or 504 may come after Vonage took the message.
      maybeAccepted: status >= 500 && !temporary,
      providerCode: String(status),
    });
  }
  if ((error as Error)?.name === "AbortError") {
    return new ProviderError("Cannot send sms: Vonage did not answer in time", {
      temporary: true,
      maybeAccepted: true,
    });
  }
  return networkFailure("Cannot send sms", error);
}

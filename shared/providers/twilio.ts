/** SMS and WhatsApp through Twilio, with the official `twilio` SDK. */
import twilio from "twilio";
import { type OutboundMessage, type Provider, ProviderError, type SendResult } from "./types.ts";

/** Options of {@linkcode createTwilioProvider}. */
export interface TwilioProviderOptions {
  accountSid: string;
  authToken: string;
  /** API base URL (instead of `https://api.twilio.com`); a fake server's in tests. */
  baseUrl?: string;
  /** Where Twilio should post status changes of a team's messages; no callbacks when absent. */
  statusCallback?: (teamId: string) => string;
}

/** The SDK's `RequestClient.RequestOptions<TData>` (its namespace is not re-exported). */
type RequestOptions<TData> =
  & Omit<Parameters<InstanceType<typeof twilio.RequestClient>["request"]>[0], "data">
  & { data?: TData };

/**
 * The SDK's own HTTP client (axios, Basic auth, form encoding) with the origin of each URL it built
 * swapped for `baseUrl`. Twilio offers only `edge`/`region` (which rewrite the host name inside
 * `twilio.com`), so an arbitrary base URL needs this hook at the last step of the request.
 */
class RebasedRequestClient extends twilio.RequestClient {
  readonly #base: URL;

  constructor(baseUrl: string) {
    super();
    this.#base = new URL(baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
  }

  override request<TData>(opts: RequestOptions<TData>) {
    const built = new URL(opts.uri);
    const rebased = new URL(`.${built.pathname}${built.search}`, this.#base);
    return super.request<TData>({ ...opts, uri: rebased.href });
  }
}

/** Creates the SMS and WhatsApp provider that sends through Twilio's Messages API. */
export function createTwilioProvider(options: TwilioProviderOptions): Provider {
  const client = twilio(options.accountSid, options.authToken, {
    httpClient: options.baseUrl ? new RebasedRequestClient(options.baseUrl) : undefined,
  });
  return {
    name: "twilio",
    async send(message: OutboundMessage): Promise<SendResult> {
      if (message.channel !== "sms" && message.channel !== "whatsapp") {
        throw new ProviderError(`Cannot send ${message.channel} with Twilio`);
      }
      if (!message.from) {
        throw new ProviderError(`Cannot send ${message.channel}: no sender`);
      }
      const address = (value: string) =>
        message.channel === "whatsapp" && !value.startsWith("whatsapp:") ? `whatsapp:${value}` : value;
      // A Messaging Service SID (MG…) chooses the sender itself.
      const sender = message.from.startsWith("MG")
        ? { messagingServiceSid: message.from }
        : { from: address(message.from) };
      try {
        const created = await client.messages.create({
          to: address(message.to),
          body: message.text ?? "",
          ...sender,
          ...(options.statusCallback ? { statusCallback: options.statusCallback(message.teamId) } : {}),
        });
        return { providerMessageId: created.sid };
      } catch (error) {
        throw toProviderError(message.channel, error);
      }
    },
  };
}

function toProviderError(channel: string, error: unknown): ProviderError {
  const { status, code, message } = error as { status?: unknown; code?: unknown; message?: string };
  if (typeof status !== "number") {
    // No HTTP answer: a network failure or timeout (axios sets a string code such as ECONNREFUSED).
    return new ProviderError(`Cannot send ${channel}: ${message ?? String(error)}`, {
      temporary: true,
      providerCode: typeof code === "string" ? code : undefined,
    });
  }
  const twilioCode = typeof code === "number" ? code : undefined;
  // Every other 4xx (21211 invalid number, 21614 not a mobile, 21610 unsubscribed…) is final.
  return new ProviderError(`Cannot send ${channel}: ${message}`, {
    temporary: status === 429 || status >= 500,
    providerCode: twilioCode?.toString(),
  });
}

/** SMS and WhatsApp through Twilio, with the official `twilio` SDK. */
import twilio from "twilio";
import { FetchRequestClient, TwilioTransportError } from "./twilio_http.ts";
import { type LogWindow, type OutboundMessage, type Provider, ProviderError, type SendResult } from "./types.ts";

/** Options of {@linkcode createTwilioProvider}. */
export interface TwilioProviderOptions {
  accountSid: string;
  authToken: string;
  /** API base URL (instead of `https://api.twilio.com`); a fake server's in tests. */
  baseUrl?: string;
  /** Where Twilio should post status changes of a team's messages; no callbacks when absent. */
  statusCallback?: (teamId: string) => string;
  /** How long a request may take (ms); the SDK's default is 30 s. */
  timeoutMs?: number;
}

/** Creates the SMS and WhatsApp provider that sends through Twilio's Messages API. */
export function createTwilioProvider(options: TwilioProviderOptions): Provider {
  const client = twilio(options.accountSid, options.authToken, {
    httpClient: new FetchRequestClient({ baseUrl: options.baseUrl, timeoutMs: options.timeoutMs }),
  });
  return {
    name: "twilio",
    resendable: false,
    async send(message: OutboundMessage): Promise<SendResult> {
      const { to, sender } = addressesOf(message);
      try {
        const created = await client.messages.create({
          to,
          body: message.text ?? "",
          ...sender,
          ...(options.statusCallback ? { statusCallback: options.statusCallback(message.teamId) } : {}),
        });
        return { providerMessageId: created.sid };
      } catch (error) {
        throw toProviderError(message.channel, error);
      }
    },
    async find(message: OutboundMessage, window: LogWindow): Promise<string[]> {
      const { to, sender } = addressesOf(message);
      const since = window.since - CLOCK_SLACK_MS;
      const until = window.until + CLOCK_SLACK_MS;
      // DateSent is filtered by the day (the finer match on date_created is made here). A message
      // Twilio has not sent yet has no date_sent and is missed: it is then failed as possibly sent.
      const listed = await client.messages.list({
        to,
        ...("from" in sender ? { from: sender.from } : {}),
        dateSentAfter: new Date(Math.floor(since / DAY_MS) * DAY_MS),
        pageSize: LOOKUP_LIMIT,
        limit: LOOKUP_LIMIT,
      });
      return listed
        .filter((m) =>
          m.body === (message.text ?? "") &&
          ("from" in sender || m.messagingServiceSid === sender.messagingServiceSid) &&
          m.dateCreated.getTime() >= since && m.dateCreated.getTime() <= until
        )
        // Twilio lists newest first; reversed, two created in the same second stay in creation order.
        .reverse()
        .sort((a, b) => a.dateCreated.getTime() - b.dateCreated.getTime())
        .map((m) => m.sid);
    },
  };
}

/** Twilio's date_created is to the second and its clock is not ours: a window this much wider. */
const CLOCK_SLACK_MS = 60_000;
const DAY_MS = 86_400_000;
/** Messages to one recipient from one sender read back at most (a day's worth for any real sender). */
const LOOKUP_LIMIT = 200;

/**
 * The recipient and sender Twilio knows a message by (`whatsapp:`-prefixed on WhatsApp; a Messaging
 * Service SID, MG…, chooses the sender itself).
 */
function addressesOf(message: OutboundMessage) {
  if (message.channel !== "sms" && message.channel !== "whatsapp") {
    throw new ProviderError(`Cannot send ${message.channel} with Twilio`);
  }
  if (!message.from) {
    throw new ProviderError(`Cannot send ${message.channel}: no sender`);
  }
  const address = (value: string) =>
    message.channel === "whatsapp" && !value.startsWith("whatsapp:") ? `whatsapp:${value}` : value;
  const sender: { from: string } | { messagingServiceSid: string } = message.from.startsWith("MG")
    ? { messagingServiceSid: message.from }
    : { from: address(message.from) };
  return { to: address(message.to), sender };
}

/** Why an answer that may hide a created message is not tried again. */
const MAY_HAVE_SENT = "Twilio may have sent it, so it is not tried again (a second try could send it twice)";

/**
 * Twilio's Messages API has no idempotency key, and its docs say of a 500 on a POST: "if you retry
 * the request, it is possible for a customer to receive multiple messages". So only what Twilio
 * did not process is tried again: a 429 (refused before processing), a 503 (unavailable), a
 * connection never made. A 500, 502 or 504, a timeout or a connection dropped mid-request fails the
 * message, with the reason.
 */
function toProviderError(channel: string, error: unknown): ProviderError {
  if (error instanceof TwilioTransportError || !(error instanceof Error && "status" in error)) {
    // No HTTP answer: only a connection never made certainly sent nothing.
    const sent = !(error instanceof TwilioTransportError) || error.mayHaveReached;
    const reason = error instanceof Error ? error.message : String(error);
    return new ProviderError(`Cannot send ${channel}: ${sent ? `${reason}; ${MAY_HAVE_SENT}` : reason}`, {
      temporary: !sent,
      maybeAccepted: sent,
    });
  }
  const { status, code, message } = error as { status: number; code?: unknown; message?: string };
  const twilioCode = typeof code === "number" ? code : undefined;
  const temporary = status === 429 || status === 503;
  // Every other 4xx (21211 invalid number, 21614 not a mobile, 21610 unsubscribed…) is final.
  return new ProviderError(
    `Cannot send ${channel}: ${message}${status >= 500 && !temporary ? `; ${MAY_HAVE_SENT}` : ""}`,
    {
      temporary,
      maybeAccepted: status >= 500 && !temporary,
      providerCode: twilioCode?.toString(),
    },
  );
}

/** Email through any SMTP server, with `nodemailer`. */
import nodemailer from "nodemailer";
import { formatSender } from "../email.ts";
import { networkFailure, type OutboundMessage, type Provider, ProviderError, type SendResult } from "./types.ts";

/** Options of {@linkcode createSmtpProvider}. */
export interface SmtpProviderOptions {
  host: string;
  port: number;
  /** Implicit TLS from the first byte; default: on port 465 only (elsewhere STARTTLS when offered). */
  secure?: boolean;
  username?: string;
  password?: string;
  /** How long connecting, the greeting and each reply may take (ms). */
  timeoutMs?: number;
}

/** Timeouts that end before the server could have taken a message (nodemailer's `timeoutType`). */
const BEFORE_ANY_MESSAGE = new Set(["CONNECT_TIMEOUT", "GREETING_TIMEOUT", "UPGRADE_TIMEOUT"]);

/** Creates the email provider that sends through an SMTP server (one connection per message). */
export function createSmtpProvider(options: SmtpProviderOptions): Provider {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const transport = nodemailer.createTransport({
    host: options.host,
    port: options.port,
    secure: options.secure ?? options.port === 465,
    auth: options.username !== undefined ? { user: options.username, pass: options.password ?? "" } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // nodemailer logs nothing unless asked; the session's AUTH lines must stay out of any log.
    logger: false,
    debug: false,
  });
  return {
    name: "smtp",
    // SMTP has no idempotency: a message handed over twice is delivered twice.
    resendable: false,
    async send(message: OutboundMessage): Promise<SendResult> {
      if (!message.from) throw new ProviderError("Cannot send email: no sender address");
      try {
        const info = await transport.sendMail({
          from: formatSender(message.from, message.fromName),
          to: message.to,
          replyTo: message.replyTo,
          subject: message.subject ?? "",
          text: message.text,
          html: message.html,
          // Our id in the Message-ID: the copy in the recipient's mailbox names the message that sent it.
          messageId: `<${message.id}@${message.from.split("@").pop()}>`,
        });
        return { providerMessageId: info.messageId };
      } catch (error) {
        throw toProviderError(error);
      }
    },
  };
}

/**
 * An SMTP failure as a ProviderError. A 4xx reply is "try again later" and a 5xx reply a final no,
 * both before the server took the message (it takes it only with the 250 after DATA). A connection
 * never made, or a timeout while connecting, is temporary; a connection lost or silent mid-session is
 * unknown: the final dot may have reached the server.
 */
function toProviderError(error: unknown): ProviderError {
  const e = error as {
    code?: string;
    responseCode?: number;
    response?: string;
    timeoutType?: string;
    message?: string;
  };
  if (typeof e.responseCode === "number" && e.responseCode >= 400) {
    const reply = e.response ?? e.message ?? "";
    return new ProviderError(`Cannot send email: the SMTP server answered ${reply}`, {
      temporary: e.responseCode < 500,
      providerCode: String(e.responseCode),
    });
  }
  if (e.code === "ETIMEDOUT") {
    const early = BEFORE_ANY_MESSAGE.has(e.timeoutType ?? "");
    return new ProviderError(`Cannot send email: the SMTP server did not answer in time (${e.timeoutType})`, {
      temporary: true,
      maybeAccepted: !early,
      providerCode: e.code,
    });
  }
  return networkFailure("Cannot send email", error);
}

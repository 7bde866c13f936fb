/**
 * Provider callbacks in, under /api/v1/inbound. They carry no API key: each is authenticated by its
 * provider's signature instead (403 when it does not verify).
 *
 * - `POST /twilio/sms?team_id=<team uuid>`: messages to our numbers. STOP, STOPALL, UNSUBSCRIBE,
 *   CANCEL, END or QUIT opts the sender out of SMS (WhatsApp when it came over WhatsApp) and emits
 *   `contact.unsubscribed`; START or UNSTOP opts back in. The team is the `team_id` in the URL
 *   configured on the Twilio number (the URL is part of what Twilio signs, so it cannot be changed
 *   by anyone without the auth token); the contacts are those whose `custom_fields.phone` has the
 *   digits of `From`.
 * - `POST /twilio/status`: message status callbacks; delivered, read, failed and undelivered are
 *   recorded on the message with that `MessageSid` (whatever team sent it).
 * - `POST /resend`: Resend's webhook (Svix signature, secret RESEND_WEBHOOK_SECRET); delivered,
 *   opened, bounced, failed and complained events are recorded on the message with that `email_id`.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { ForbiddenError, ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { metrics } from "../../shared/metrics.ts";
import type { Db } from "../../shared/db.ts";
import type { DeliveryState } from "../../shared/delivery_reports.ts";
import { changeAndReport, type TeamEvent } from "../../shared/event_outbox.ts";
import { verifyWebhook } from "../../shared/webhook_signing.ts";
import {
  type ChangedMessage,
  recordDeliveryState,
  setChannelSubscriptionByPhone,
  unsubscribeEmailPromotional,
} from "./queries.ts";
import { verifyTwilioSignature } from "./twilio_signature.ts";
import { tag } from "../../shared/http/openapi.ts";

const tags = tag("Inbound callbacks");

/** Replies that opt out and back in (Twilio's standard keywords). */
export const STOP_WORDS = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"];
/** Replies that opt back in. */
export const START_WORDS = ["START", "UNSTOP"];

const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const TWILIO_STATES: Record<string, DeliveryState> = {
  delivered: "delivered",
  read: "read",
  failed: "failed",
  undelivered: "failed",
};

const RESEND_STATES: Record<string, DeliveryState> = {
  "email.delivered": "delivered",
  "email.opened": "read",
  "email.bounced": "failed",
  "email.failed": "failed",
  "email.complained": "complained",
};

const ResendEvent = z.object({
  type: z.string(),
  data: z.object({
    email_id: z.string().optional(),
    bounce: z.object({ message: z.string().optional() }).optional(),
    failed: z.object({ reason: z.string().optional() }).optional(),
  }).passthrough(),
});

/**
 * The URLs Twilio may have signed for this request: behind a proxy, the public one (PUBLIC_URL, or
 * the forwarded host and scheme when TRUST_PROXY=1) differs from the one the server sees.
 */
function candidateUrls(c: Context<AppEnv>, deps: Deps): string[] {
  const seen = c.req.url;
  const pathAndQuery = seen.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "");
  const urls = [seen];
  if (deps.config.PUBLIC_URL) urls.unshift(deps.config.PUBLIC_URL.replace(/\/+$/, "") + pathAndQuery);
  if (deps.config.TRUST_PROXY) {
    const proto = c.req.header("x-forwarded-proto")?.split(",")[0].trim();
    const host = c.req.header("x-forwarded-host")?.split(",")[0].trim() ?? c.req.header("host");
    if (proto && host) urls.push(`${proto}://${host}${pathAndQuery}`);
  }
  return urls;
}

/** The form parameters of a Twilio callback, after its signature is checked (403 otherwise). */
async function twilioParams(c: Context<AppEnv>, deps: Deps, kind: string): Promise<URLSearchParams> {
  const params = new URLSearchParams(await c.req.text());
  const token = deps.config.TWILIO_AUTH_TOKEN;
  const ok = token !== undefined &&
    await verifyTwilioSignature(token, c.req.header("x-twilio-signature"), candidateUrls(c, deps), params);
  metrics.inbound.inc({ provider: "twilio", kind, outcome: ok ? "ok" : "forbidden" });
  if (!ok) throw new ForbiddenError("Invalid Twilio signature", "invalid_signature");
  return params;
}

/** The webhook event of a changed message. */
function messageEvent(message: ChangedMessage): TeamEvent {
  const type = message.delivery_status === "read"
    ? "message.read"
    : message.delivery_status === "failed"
    ? "message.failed"
    : "message.delivered";
  return {
    team_id: message.team_id,
    type,
    data: {
      execution_id: message.execution_id,
      message_id: message.id,
      status: message.delivery_status,
      trigger_id: message.trigger_id,
      channel: message.channel,
    },
  };
}

const twiml = { description: "Empty TwiML", content: { "text/xml": { schema: z.string() } } };
const forbidden = { description: "The signature does not verify" };

/** The provider callback routes (mounted before the API-key check). */
export function inboundRoutes(deps: Deps) {
  const app = newRouter();

  app.openapi(
    createRoute({
      method: "post",
      path: "/twilio/sms",
      tags,
      security: [],
      summary: "Twilio incoming message webhook (form-encoded; STOP/START keywords)",
      description:
        "Set as the messaging webhook of your Twilio numbers (`?team_id=`). STOP, STOPALL, UNSUBSCRIBE, CANCEL, END " +
        "and QUIT opt the contact out of SMS; START and UNSTOP opt it in again. Checked with Twilio's request " +
        "signature.",
      request: { query: z.object({ team_id: z.string().optional() }) },
      responses: { 200: twiml, 400: { description: "No valid team_id in the URL" }, 403: forbidden },
    }),
    async (c) => {
      const params = await twilioParams(c, deps, "sms");
      const teamId = c.req.valid("query").team_id ?? "";
      if (!UUID.test(teamId)) throw new ValidationError("team_id query parameter must be a team id", "invalid_team_id");
      const keyword = (params.get("Body") ?? "").trim().toUpperCase();
      const from = params.get("From") ?? "";
      const channel = from.startsWith("whatsapp:") ? "whatsapp" : "sms";
      const stop = STOP_WORDS.includes(keyword);
      if (stop || START_WORDS.includes(keyword)) {
        const phone = from.replace(/^whatsapp:/, "");
        await changeAndReport(
          deps,
          (tx) => setChannelSubscriptionByPhone(tx, teamId, phone, channel, !stop),
          (changed) =>
            stop
              ? changed.map((contact) => ({
                team_id: teamId,
                type: "contact.unsubscribed" as const,
                data: {
                  contact_id: contact.id,
                  external_id: contact.external_id,
                  channel,
                  categories: ["transactional", "promotional"],
                  source: "twilio",
                  keyword,
                },
              }))
              : [],
        );
      }
      return c.body(EMPTY_TWIML, 200, { "Content-Type": "text/xml" });
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/twilio/status",
      tags,
      security: [],
      summary: "Twilio message status callback (form-encoded)",
      description:
        "Twilio's delivery statuses (delivered, read, failed) for messages sent through it; they update the message " +
        "records and trigger webhooks. Checked with Twilio's request signature.",
      responses: { 204: { description: "Recorded (or ignored)" }, 403: forbidden },
    }),
    async (c) => {
      const params = await twilioParams(c, deps, "status");
      const state = TWILIO_STATES[params.get("MessageStatus") ?? ""];
      const sid = params.get("MessageSid");
      if (state && sid) {
        const code = params.get("ErrorCode");
        await changeAndReport(
          deps,
          (tx) => recordDeliveryState(tx, sid, state, code ? `Twilio error ${code}` : undefined),
          (changed) => changed ? [messageEvent(changed)] : [],
        );
      }
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/resend",
      tags,
      security: [],
      summary: "Resend webhook (email events, Svix signature)",
      description:
        "Resend's email events for messages sent through it; they update the message records and trigger webhooks. " +
        "Checked with the signing secret.",
      responses: {
        204: { description: "Recorded (or ignored)" },
        400: { description: "Not an event" },
        403: forbidden,
      },
    }),
    async (c) => {
      const body = await c.req.text();
      const secret = deps.config.RESEND_WEBHOOK_SECRET;
      const ok = secret !== undefined && await verifyWebhook(secret, c.req.raw.headers, body, { now: deps.now() });
      metrics.inbound.inc({ provider: "resend", kind: "email", outcome: ok ? "ok" : "forbidden" });
      if (!ok) throw new ForbiddenError("Invalid Resend signature", "invalid_signature");
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const parsed = ResendEvent.safeParse(json);
      if (!parsed.success) throw new ValidationError("Not a Resend event", "invalid_event");
      const event = parsed.data;
      const state = RESEND_STATES[event.type];
      if (state && event.data.email_id) {
        const reason = event.data.bounce?.message ?? event.data.failed?.reason;
        const emailId = event.data.email_id;
        await changeAndReport(
          deps,
          (tx) => recordDeliveryState(tx, emailId, state, reason),
          async (changed, tx) => changed ? await resendEvents(tx, changed) : [],
        );
      }
      return c.body(null, 204);
    },
  );

  return app;
}

/**
 * Events for a Resend report: a complaint also turns off the contact's promotional email, in `tx`
 * (the report's own transaction: a report recorded is never left with its contact still subscribed).
 */
async function resendEvents(tx: Db, message: ChangedMessage): Promise<TeamEvent[]> {
  if (message.delivery_status !== "complained") return [messageEvent(message)];
  if (!message.contact_id) return [];
  const contact = await unsubscribeEmailPromotional(tx, message.team_id, message.contact_id);
  if (!contact) return [];
  return [{
    team_id: message.team_id,
    type: "contact.unsubscribed",
    data: {
      contact_id: contact.id,
      external_id: contact.external_id,
      channel: "email",
      categories: ["promotional"],
      source: "resend",
      reason: "complaint",
    },
  }];
}

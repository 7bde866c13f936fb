import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Deps, Team } from "../../shared/deps.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";
import type { Channel } from "../../shared/providers/types.ts";
import {
  acceptedBody,
  contactOrThrow,
  ensureAffordable,
  fanOutRecipient,
  newSendSpec,
  required,
  scheduledFor,
  type ScheduleFields,
  type SendingService,
  sendingService,
} from "../../shared/sending/accept.ts";
import type { Content, Recipient } from "../../shared/sending/spec.ts";
import type { ContactRow } from "../../shared/contacts/queries.ts";
import { AcceptedSend, errors } from "../messages/schemas.ts";

/** The fields every single-channel send body has. */
export interface SendFields extends ScheduleFields {
  recipient_type: string;
  contact_external_id?: string;
  tag?: string | string[];
  tags?: string | string[];
  segment_id?: string;
  direct_first_name?: string;
  direct_last_name?: string;
  variables?: Record<string, unknown> | unknown[];
  metadata?: Record<string, unknown>;
  campaign_name?: string;
}

/** What a channel decides of a send; the rest is the same on every channel. */
export interface ChannelSend {
  recipient: Recipient;
  content: Content;
  /** Template variables, when the channel reads them otherwise than `variablesOf(body.variables)`. */
  variables?: Record<string, unknown>;
  /** What one message costs a live key (micro-dollars), checked against the wallet; no check when absent. */
  cost?: (variables: Record<string, unknown>) => number;
}

/** A channel's POST /send route. */
export interface SendRoute<B extends SendFields> {
  channel: Channel;
  tag: string;
  summary: string;
  body: z.ZodType<B>;
  /** Whether the 201 of a scheduled send shows `delay_ms`. */
  delayMs: boolean;
  /** Whether the 201 also has the alternative email shape's fields (see acceptedBody). */
  executionFields?: boolean;
  /** Checks of the body that come before the schedule is read. */
  check?: (body: B) => void;
  /** Validates the rest of the body (after the schedule) and decides the send. */
  plan: (body: B, team: Team, service: SendingService) => Promise<ChannelSend>;
}

/**
 * Adds a channel's POST /send to its router: reads the schedule, lets the channel decide recipient
 * and content, checks a live key's wallet can pay one message, hands the send to the acceptor and
 * answers 201 (queued or scheduled).
 */
export function addSendRoute<B extends SendFields>(app: OpenAPIHono<AppEnv>, deps: Deps, route: SendRoute<B>): void {
  const service = sendingService(deps);
  app.openapi(
    createRoute({
      method: "post",
      path: "/send",
      tags: [route.tag],
      summary: route.summary,
      request: { body: jsonBody(route.body) },
      responses: { 201: jsonResponse(AcceptedSend, "Queued or scheduled"), ...errors(400, 403, 404, 409, 422) },
    }),
    async (c) => {
      const body = c.req.valid("json") as B;
      const team = c.get("team");
      const now = deps.now();
      route.check?.(body);
      const at = scheduledFor(body, now);
      const send = await route.plan(body, team, service);
      const spec = newSendSpec({
        team_id: team.id,
        sandbox: c.get("apiKey").test,
        trigger_type: route.channel,
        body,
        recipient: send.recipient,
        contents: [send.content],
        variables: send.variables,
        now,
        at,
      });
      if (send.cost && !spec.sandbox) await ensureAffordable(service, team.id, send.cost(spec.variables));
      await service.acceptor.accept(spec, now);
      return c.json(acceptedBody(spec, now, { delayMs: route.delayMs, executionFields: route.executionFields }), 201);
    },
  );
}

/**
 * The recipient a send body names: `direct()` for its direct type; for `contact`, the team's contact
 * (400 without contact_external_id, 404 when unknown); else the tag, segment or all fan-out.
 */
export async function sendRecipient(
  deps: Deps,
  teamId: string,
  body: SendFields,
  direct: () => Recipient,
): Promise<{ recipient: Recipient; contact?: ContactRow }> {
  switch (body.recipient_type) {
    case "contact": {
      if (!body.contact_external_id) throw required("contact_external_id");
      const contact = await contactOrThrow(deps, teamId, body.contact_external_id);
      return { recipient: { type: "contact", contact_id: contact.id, external_id: contact.external_id }, contact };
    }
    case "tag":
    case "segment":
    case "all":
      return { recipient: await fanOutRecipient(deps, teamId, body.recipient_type, body) };
    default:
      return { recipient: direct() };
  }
}

/** A direct recipient at `address`, with the body's direct_first_name and direct_last_name. */
export function directRecipient(
  body: SendFields,
  address: string,
  extra: { platform?: "android" | "ios" | "web" } = {},
) {
  return {
    type: "direct" as const,
    address,
    ...extra,
    first_name: body.direct_first_name,
    last_name: body.direct_last_name,
  };
}

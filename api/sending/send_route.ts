import { createRoute, type OpenAPIHono, type RouteHandler, type z } from "@hono/zod-openapi";
import type { ApiKey, Deps, Team } from "../../shared/deps.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";
import type { Channel } from "../../shared/providers/types.ts";
import {
  acceptedBody,
  contactOrThrow,
  ensureAffordable,
  fanOutRecipient,
  newSendSpec,
  outboxedChannels,
  required,
  scheduledFor,
  type ScheduleFields,
  type SendingService,
  sendingService,
  sendWarnings,
} from "../../shared/sending/accept.ts";
import type { Content, Recipient } from "../../shared/sending/spec.ts";
import type { ContactRow } from "../../shared/contacts/queries.ts";
import { AcceptedSend, errors } from "../messages/schemas.ts";
import { SEND_HEADERS, tag, type TagName } from "../../shared/http/openapi.ts";
import type { RequestExamples } from "../../shared/http/examples.ts";
import { fallbackContents, type FallbackRequest, withFallbacks } from "./fallback.ts";

/** The fields every single-channel send body has. */
export interface SendFields extends ScheduleFields, FallbackRequest {
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
  tag: TagName;
  summary: string;
  /** What the operation does, for the document. */
  description: string;
  /** Named request bodies that work as written (see shared/http/examples.ts). */
  examples: RequestExamples;
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

/** A send route's own work without HTTP (the dashboard's test sends run it): its body schema, and what it does with a valid body. */
export interface SendHandler {
  body: z.ZodType;
  /** Accepts a valid body for the key's team: the 201 answer's body. */
  accept(body: unknown, team: Team, apiKey: ApiKey): Promise<unknown>;
}

/** The send routes' own work, by Hono handler: found among a router's routes. */
const sendHandlers = new WeakMap<object, SendHandler>();

/** The send route's own work behind a route handler, when it is a send route's. */
export function sendHandlerOf(handler: object): SendHandler | undefined {
  return sendHandlers.get(handler);
}

/**
 * Adds a channel's POST /send to its router: reads the schedule, lets the channel decide recipient
 * and content, checks a live key's wallet can pay one message, hands the send to the acceptor and
 * answers 201 (queued or scheduled).
 */
export function addSendRoute<B extends SendFields>(app: OpenAPIHono<AppEnv>, deps: Deps, route: SendRoute<B>): void {
  const service = sendingService(deps);
  const own: SendHandler = {
    body: route.body,
    accept: (body, team, apiKey) => acceptSend(route, service, body as B, team, apiKey),
  };
  const definition = createRoute({
    method: "post",
    path: "/send",
    tags: tag(route.tag),
    summary: route.summary,
    description: route.description,
    parameters: SEND_HEADERS,
    request: { body: jsonBody(route.body, route.examples) },
    responses: { 201: jsonResponse(AcceptedSend, "Queued or scheduled"), ...errors(400, 403, 404, 409, 422) },
  });
  const handler: RouteHandler<typeof definition, AppEnv> = async (c) =>
    c.json(await acceptSend(route, service, c.req.valid("json") as B, c.get("team"), c.get("apiKey")), 201);
  sendHandlers.set(handler, own);
  app.openapi(definition, handler);
}

/** What a send route does with a valid body: the 201 answer's body, or an AppError thrown. */
async function acceptSend<B extends SendFields>(
  route: SendRoute<B>,
  service: SendingService,
  body: B,
  team: Team,
  apiKey: ApiKey,
) {
  const now = service.deps.now();
  route.check?.(body);
  const at = scheduledFor(body, now);
  const send = await route.plan(body, team, service);
  const fallbacks = await fallbackContents(service, team, body, { ...send, contents: [send.content] });
  const spec = withFallbacks(
    newSendSpec({
      team_id: team.id,
      sandbox: apiKey.test,
      trigger_type: route.channel,
      body,
      recipient: send.recipient,
      contents: [send.content],
      variables: send.variables,
      now,
      at,
    }),
    fallbacks,
    body,
  );
  // A live message kept in the outbox for want of a provider is free: no wallet to check.
  const outboxed = await outboxedChannels(service, spec);
  if (send.cost && !spec.sandbox && !outboxed.has(route.channel)) {
    await ensureAffordable(service, team.id, send.cost(spec.variables));
  }
  const warnings = await sendWarnings(service, spec, outboxed);
  await service.acceptor.accept(spec, now);
  const accepted = acceptedBody(spec, now, { delayMs: route.delayMs, executionFields: route.executionFields });
  return warnings.length > 0 ? { ...accepted, warnings } : accepted;
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

import { z } from "@hono/zod-openapi";
import { errorResponses, RecordId, timestamp } from "../../shared/http/schemas.ts";
import { EVENT_TYPES } from "../../shared/webhook_events.ts";
import type { AttemptRow, EndpointRow } from "./queries.ts";

/** Response entries for the error statuses a route answers. */
export const errors = errorResponses({ 400: "Invalid request", 404: "Webhook endpoint not found" });

const EventTypes = z.array(z.enum(EVENT_TYPES)).min(1).openapi({
  description: "Event types to receive; every type (present and future) when omitted.",
});

/** `POST /webhooks` body. */
export const CreateWebhookBody = z.object({
  url: z.string().min(1).max(2048),
  events: EventTypes.optional(),
});

/** `PATCH /webhooks/{id}` body: only the fields given change; `is_active: true` re-enables an endpoint. */
export const UpdateWebhookBody = z.object({
  url: z.string().min(1).max(2048).optional(),
  events: EventTypes.nullable().optional(),
  is_active: z.boolean().optional(),
});

/** Path parameter `{id}`. */
export const IdParams = z.object({ id: RecordId });

/** `GET /webhooks/{id}/deliveries` query. */
export const DeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  starting_after: RecordId.optional().openapi({ description: "Id of the last attempt of the previous page" }),
});

/** An endpoint as answered (never with its secret). */
export const WebhookEndpoint = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  is_active: z.boolean(),
  disabled_reason: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
}).openapi("WebhookEndpoint");

/** An endpoint with its signing secret (answered on create and on rotation only). */
export const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: z.string().openapi({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
}).openapi("WebhookEndpointWithSecret");

/** The team's endpoints. */
export const WebhookList = z.object({ data: z.array(WebhookEndpoint) });

/** Answer of a delete. */
export const Deleted = z.object({ deleted: z.literal(true), id: z.string() });

/** One delivery attempt. */
export const DeliveryAttempt = z.object({
  id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  attempt: z.number().int(),
  status: z.enum(["succeeded", "failed"]),
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  latency_ms: z.number().int(),
  next_retry_at: timestamp.nullable(),
  created_at: timestamp,
}).openapi("WebhookDeliveryAttempt");

/** A page of attempts, newest first. */
export const DeliveryList = z.object({
  data: z.array(DeliveryAttempt),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});

/** The answer body of an endpoint row. */
export function endpointBody(row: EndpointRow): z.infer<typeof WebhookEndpoint> {
  return {
    id: row.id,
    url: row.url,
    events: row.events ?? [...EVENT_TYPES],
    is_active: row.is_active,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The answer body of an attempt row. */
export function attemptBody(row: AttemptRow): z.infer<typeof DeliveryAttempt> {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status: row.status,
    response_status: row.response_status,
    error: row.error,
    latency_ms: row.latency_ms,
    next_retry_at: row.next_retry_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

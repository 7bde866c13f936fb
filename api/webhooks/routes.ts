import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError, ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { urlRefusal } from "../../shared/ssrf.ts";
import { invalidateEndpointCache } from "../../shared/webhook_events.ts";
import { newWebhookSecret } from "../../shared/webhook_signing.ts";
import {
  countEndpoints,
  createEndpoint,
  deleteEndpoint,
  type EndpointRow,
  findEndpoint,
  listAttempts,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
} from "./queries.ts";
import {
  attemptBody,
  CreateWebhookBody,
  Deleted,
  DeliveriesQuery,
  DeliveryList,
  endpointBody,
  errors,
  IdParams,
  UpdateWebhookBody,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookList,
} from "./schemas.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";
import { tag } from "../../shared/http/openapi.ts";

const tags = tag("Webhooks");

/** Endpoints a team may register. */
export const MAX_ENDPOINTS = 20;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function notFound(): NotFoundError {
  return new NotFoundError("Webhook endpoint not found", "webhook_not_found");
}

/** The endpoint or a 404 (an id that is not a UUID names no endpoint). */
function found(row: EndpointRow | undefined): EndpointRow {
  if (!row) throw notFound();
  return row;
}

function checkedId(id: string): string {
  if (!UUID.test(id)) throw notFound();
  return id;
}

async function checkUrl(deps: Deps, url: string): Promise<void> {
  const refusal = await urlRefusal(url, { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE });
  if (refusal) throw new ValidationError(refusal, "invalid_webhook_url");
}

/**
 * Registers an endpoint of the team with a new secret (in the row answered): the URL's SSRF rule,
 * the limit per team, events deduplicated (null: every event). The API's POST and the dashboard's
 * form both register through it.
 */
export async function registerEndpoint(
  deps: Deps,
  teamId: string,
  body: { url: string; events?: string[] },
): Promise<EndpointRow> {
  await checkUrl(deps, body.url);
  if (await countEndpoints(deps.sql, teamId) >= MAX_ENDPOINTS) {
    throw new ValidationError(`Cannot register more than ${MAX_ENDPOINTS} webhook endpoints`, "too_many_webhooks");
  }
  const events = body.events ? [...new Set(body.events)] : null;
  const row = await createEndpoint(deps.sql, teamId, { url: body.url, events, secret: newWebhookSecret() });
  invalidateEndpointCache(teamId);
  return row;
}

/** Outbound webhook endpoints under /api/v1/webhooks. */
export function webhooksRoutes(deps: Deps) {
  const app = newRouter();
  const db = deps.sql;

  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags,
      summary: "Register a webhook endpoint (the secret is shown only in this answer)",
      description:
        "Registers an HTTPS endpoint for the listed `events` (all when omitted). Keep the `secret` of the answer: " +
        "it signs every delivery (headers `webhook-id`, `webhook-timestamp`, `webhook-signature`: `v1,<base64 " +
        "HMAC-SHA256 of id.timestamp.body>`) and is not shown again. Private and loopback addresses are refused.",
      request: { body: jsonBody(CreateWebhookBody) },
      responses: { 201: jsonResponse(WebhookEndpointWithSecret, "The endpoint and its secret"), ...errors(400) },
    }),
    async (c) => {
      const row = await registerEndpoint(deps, c.get("team").id, c.req.valid("json"));
      return c.json({ ...endpointBody(row), secret: row.secret }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags,
      summary: "List the team's webhook endpoints",
      description: "Every endpoint of the team, without secrets.",
      responses: { 200: jsonResponse(WebhookList, "The endpoints, newest first") },
    }),
    async (c) => {
      const rows = await listEndpoints(db, c.get("team").id);
      return c.json({ data: rows.map(endpointBody) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{id}",
      tags,
      summary: "Get a webhook endpoint",
      description: "One endpoint, without its secret.",
      request: { params: IdParams },
      responses: { 200: jsonResponse(WebhookEndpoint, "The endpoint"), ...errors(404) },
    }),
    async (c) => {
      const row = found(await findEndpoint(db, c.get("team").id, checkedId(c.req.valid("param").id)));
      return c.json(endpointBody(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/{id}",
      tags,
      summary: "Change a webhook endpoint's URL or events, or re-enable it",
      description:
        "Changes the URL or the events, or turns the endpoint on again (`is_active: true`) after it was disabled (a " +
        "410 answer disables it).",
      request: { params: IdParams, body: jsonBody(UpdateWebhookBody) },
      responses: { 200: jsonResponse(WebhookEndpoint, "The endpoint"), ...errors(400, 404) },
    }),
    async (c) => {
      const id = checkedId(c.req.valid("param").id);
      const body = c.req.valid("json");
      if (body.url !== undefined) await checkUrl(deps, body.url);
      const events = body.events ? [...new Set(body.events)] : body.events;
      const row = found(await updateEndpoint(db, c.get("team").id, id, { ...body, events }));
      invalidateEndpointCache(c.get("team").id);
      return c.json(endpointBody(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/{id}",
      tags,
      summary: "Delete a webhook endpoint",
      description: "Stops deliveries to the endpoint at once.",
      request: { params: IdParams },
      responses: { 200: jsonResponse(Deleted, "Deleted"), ...errors(404) },
    }),
    async (c) => {
      const id = await deleteEndpoint(db, c.get("team").id, checkedId(c.req.valid("param").id));
      if (!id) throw notFound();
      invalidateEndpointCache(c.get("team").id);
      return c.json({ deleted: true as const, id }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/{id}/rotate-secret",
      tags,
      summary: "Replace the signing secret (the old one also signs for 24 hours)",
      description:
        "Answers a new secret; for 24 hours deliveries carry signatures by both, so that receivers can switch " +
        "without losing any.",
      request: { params: IdParams },
      responses: { 200: jsonResponse(WebhookEndpointWithSecret, "The endpoint and its new secret"), ...errors(404) },
    }),
    async (c) => {
      const id = checkedId(c.req.valid("param").id);
      const row = found(await rotateEndpointSecret(db, c.get("team").id, id, deps.now()));
      return c.json({ ...endpointBody(row), secret: row.secret }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{id}/deliveries",
      tags,
      summary: "List delivery attempts of an endpoint, newest first",
      description:
        "Each attempt with its status, answer code and time: what to look at when deliveries fail. Only a 2xx " +
        "answer counts as delivered; others are retried with back-off for at least 24 hours.",
      request: { params: IdParams, query: DeliveriesQuery },
      responses: { 200: jsonResponse(DeliveryList, "A page of attempts"), ...errors(400, 404) },
    }),
    async (c) => {
      const endpoint = found(await findEndpoint(db, c.get("team").id, checkedId(c.req.valid("param").id)));
      const query = c.req.valid("query");
      const { rows, hasMore } = await listAttempts(db, endpoint.id, {
        limit: query.limit,
        startingAfter: query.starting_after,
      });
      return c.json({
        data: rows.map(attemptBody),
        has_more: hasMore,
        next_cursor: hasMore ? rows[rows.length - 1].id : null,
      }, 200);
    },
  );

  return app;
}

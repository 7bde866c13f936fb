import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";
import { clearOutbox, listOutbox } from "./queries.ts";
import { ADMIN, BadRequest, OutboxCleared, OutboxFilter, OutboxList, OutboxQuery, Unauthorized } from "./schemas.ts";
import { jsonResponse } from "../../shared/http/schemas.ts";

/** The outbox: every message the outbox provider recorded, to read and to clear. */
export function adminOutboxRoutes(deps: Deps) {
  const app = newRouter();

  app.openapi(
    createRoute({
      method: "get",
      path: "/outbox",
      ...ADMIN,
      summary: "Messages recorded by the outbox provider, newest first",
      description:
        "Every message sent with a test key, or with no provider configured, as rendered: where to read what a test " +
        "sent.",
      request: { query: OutboxQuery },
      responses: { 200: jsonResponse(OutboxList, "The messages"), 400: BadRequest, 401: Unauthorized },
    }),
    async (c) => {
      const { limit, ...filter } = c.req.valid("query");
      const rows = await listOutbox(deps.sql, filter, limit);
      const messages = rows.map((m) => ({
        id: m.id,
        team_id: m.team_id,
        channel: m.channel,
        to: m.to_address,
        subject: m.subject,
        body: m.body,
        trigger_id: m.trigger_id,
        created_at: m.created_at,
      }));
      return c.json({ messages }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/outbox",
      ...ADMIN,
      summary: "Clear the outbox (or the messages matching the filters)",
      description: "Deletes the recorded messages, or only those matching `to` and `channel`.",
      request: { query: OutboxFilter },
      responses: { 200: jsonResponse(OutboxCleared, "How many were deleted"), 400: BadRequest, 401: Unauthorized },
    }),
    async (c) => {
      return c.json({ deleted: await clearOutbox(deps.sql, c.req.valid("query")) }, 200);
    },
  );

  return app;
}

import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { requireTeamHeader } from "../../shared/http/auth.ts";
import { eventTypes } from "../workflows/event_types.ts";
import { parseTimestamp } from "../../shared/timestamps.ts";
import { ensureFuture } from "../workflows/start_routes.ts";
import { acceptEvent } from "./accept.ts";
import { EventAccepted, SendEventBody } from "./schemas.ts";
import { tag } from "../../shared/http/openapi.ts";
import { IDEMPOTENCY_KEY_HEADER, teamIdHeader } from "../../shared/http/openapi.ts";
import { jsonBody } from "../../shared/http/schemas.ts";
import { EVENT_EXAMPLES } from "./examples.ts";

const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

/** Inbound events under /api/v1/events. */
export function eventsRoutes(deps: Deps) {
  const app = newRouter();

  app.openapi(
    createRoute({
      method: "post",
      path: "/send",
      tags: tag("Events"),
      summary: "Send a named event to the workflows listening for it",
      description:
        "Queues the event and answers 201 at once; a worker then starts every active workflow whose `event_type` is " +
        "`event_name`, for the contact of `user_info`, as the workflow's conditions allow. Requires `X-Team-ID`. " +
        "404 'Event type not found' when no workflow listens for the name.",
      middleware: [requireTeamHeader()] as const,
      parameters: [teamIdHeader(true), IDEMPOTENCY_KEY_HEADER],
      request: { body: jsonBody(SendEventBody, EVENT_EXAMPLES) },
      responses: { 201: { description: "Queued (or scheduled)", ...json(EventAccepted) } },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const now = deps.now();
      const at = body.trigger_at === undefined ? undefined : parseTimestamp(body.trigger_at);
      ensureFuture(at, now);
      const team = c.get("team");
      if (!await eventTypes.has(deps.sql, team.id, body.event_name, now)) {
        throw new NotFoundError("Event type not found", "event_type_not_found");
      }
      const accepted = await acceptEvent(deps, { team, apiKey: c.get("apiKey"), event: body, at, now });
      const ids = { trigger_id: accepted.triggerId, job_id: accepted.jobId };
      if (at === undefined) {
        return c.json({ success: true, ...ids, message: "Event queued successfully", data: ids }, 201);
      }
      const scheduledFor = new Date(at).toISOString();
      return c.json({
        success: true,
        ...ids,
        message: `Event scheduled for ${scheduledFor}`,
        scheduled_for: scheduledFor,
        data: ids,
      }, 201);
    },
  );

  return app;
}

import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { errors } from "../messages/schemas.ts";
import { jsonResponse } from "../../shared/http/schemas.ts";
import { DirectTrigger, Trigger, TriggerParams } from "./schemas.ts";
import { findTrigger, jobsEndpoint, notOfKind, type TriggerView } from "./tracking.ts";
import { triggerWarnings } from "./warnings.ts";
import { tag } from "../../shared/http/openapi.ts";

const tags = tag("Tracking");

/** Trigger tracking under /api/v1/triggers. */
export function triggersRoutes(deps: Deps) {
  const app = newRouter();
  const load = async (teamId: string, id: string): Promise<TriggerView> => {
    const trigger = await findTrigger(deps, teamId, id);
    if (!trigger) throw new NotFoundError("Trigger not found", "trigger_not_found");
    return trigger;
  };

  app.openapi(
    createRoute({
      method: "get",
      path: "/{trigger_id}",
      tags,
      summary: "The status and counts of a send",
      description:
        "The trigger a send, trigger, event or workflow start answered: `pending`, `processing`, `completed` or " +
        "`failed`, with `summary` counts (`total_contacts = sent + failed + filtered` once complete). " +
        "`details_endpoint` names the detail view.",
      request: { params: TriggerParams },
      responses: { 200: jsonResponse(Trigger, "The trigger"), ...errors(404) },
    }),
    async (c) => {
      const t = await load(c.get("team").id, c.req.valid("param").trigger_id);
      const warnings = await triggerWarnings(deps.sql, t.id);
      return c.json({
        id: t.id,
        trigger_id: t.id,
        flow_type: t.flow_type,
        trigger_type: t.trigger_type,
        status: t.status,
        created_at: t.created_at,
        started_at: t.started_at,
        completed_at: t.completed_at,
        scheduled_for: t.scheduled_for,
        summary: t.summary,
        ...(t.note === undefined ? {} : { note: t.note }),
        ...warnings,
        channels: t.executions.map((e) => e.channel),
        details_endpoint: t.details_endpoint,
      } as never, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{trigger_id}/direct",
      tags,
      summary: "The executions (one per channel) of a direct send",
      description:
        "For a send or multi-channel trigger: one execution per channel with its counts, and the path of its " +
        "per-recipient messages.",
      request: { params: TriggerParams },
      responses: { 200: jsonResponse(DirectTrigger, "The trigger's executions"), ...errors(404) },
    }),
    async (c) => {
      const t = await load(c.get("team").id, c.req.valid("param").trigger_id);
      if (t.flow_type !== "direct_channel") throw notOfKind("direct");
      return c.json({
        trigger_id: t.id,
        flow_type: t.flow_type,
        trigger_type: t.trigger_type,
        channel: t.executions.length === 1 ? t.executions[0].channel : "multi_channel",
        status: t.status,
        summary: t.summary,
        executions: t.executions.map((e) => ({
          channel: e.channel,
          execution: {
            id: e.id,
            status: e.status,
            total_contacts: e.total_contacts,
            sent_count: e.sent_count,
            failed_count: e.failed_count,
            filtered_count: e.filtered_count,
            created_at: e.created_at,
            completed_at: e.completed_at,
          },
          jobs_endpoint: jobsEndpoint(e.channel, e.id),
        })),
      } as never, 200);
    },
  );
  return app;
}

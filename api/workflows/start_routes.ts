import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError, ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { contactOrThrow, newSendIds } from "../../shared/sending/accept.ts";
import type { StartRecipient, WorkflowStart } from "../../shared/workflows/start.ts";
import { workflowAcceptor } from "./acceptor.ts";
import { findWorkflowHead } from "./queries.ts";
import { parseTimestamp } from "../../shared/timestamps.ts";
import {
  SendWorkflowBody,
  TriggerWorkflowBody,
  type TriggerWorkflowData,
  WorkflowTriggered,
} from "./trigger_schemas.ts";
import { SEND_HEADERS, tag } from "../../shared/http/openapi.ts";
import { SEND_WORKFLOW_EXAMPLES, TRIGGER_WORKFLOW_EXAMPLES } from "./examples.ts";
import { jsonBody } from "../../shared/http/schemas.ts";

const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

/** 400 'trigger_at must be a future date' unless `at` is after `now`. */
export function ensureFuture(at: number | undefined, now: number): void {
  if (at !== undefined && at <= now) {
    throw new ValidationError("trigger_at must be a future date", "invalid_value", {
      details: { field: "trigger_at", code: "invalid_value" },
    });
  }
}

/**
 * Checks an API start (the workflow exists and is active, the contact exists), hands it to the
 * group-committing acceptor and answers 201. Nothing is sent here: the worker makes the executions.
 */
async function start(deps: Deps, c: Context<AppEnv>, body: TriggerWorkflowData) {
  const now = deps.now();
  const at = body.trigger_at === undefined ? undefined : parseTimestamp(body.trigger_at);
  ensureFuture(at, now);
  const teamId = c.get("team").id;
  const workflow = await findWorkflowHead(deps.sql, teamId, { id: body.workflow_id, name: body.workflow_name });
  if (!workflow) throw new NotFoundError("Workflow not found", "workflow_not_found");
  if (!workflow.is_active) {
    throw new ValidationError("Workflow is not active", "workflow_inactive", {
      details: { field: "workflow_id", code: "inactive" },
    });
  }
  let recipient: StartRecipient;
  if (body.recipient_type === "contact") {
    const contact = await contactOrThrow(deps, teamId, body.contact_external_id!);
    recipient = { type: "contact", contact_id: contact.id, external_id: contact.external_id };
  } else if (body.recipient_type === "tag") {
    recipient = { type: "tag", tags: [...new Set([...body.tag ?? [], ...body.tags ?? []])] };
  } else {
    recipient = { type: "all" };
  }
  const ids = newSendIds();
  const executionIds = recipient.type === "contact" ? [crypto.randomUUID()] : [];
  const channelVariables = Object.fromEntries(
    Object.entries(body.channel_variables ?? {}).filter((e): e is [string, Record<string, unknown>] => !!e[1]),
  );
  const workflowStart: WorkflowStart = {
    ...ids,
    team_id: teamId,
    sandbox: c.get("apiKey").test,
    source: "api",
    workflow_id: workflow.id,
    recipient,
    execution_id: executionIds[0],
    variables: body.variables ?? {},
    channel_variables: channelVariables,
    steps_override: body.steps_override ?? {},
    metadata: body.metadata ?? {},
    created_at: now,
    scheduled_for: at ?? null,
  };
  await workflowAcceptor(deps).accept(workflowStart, now);
  const scheduled = at === undefined ? {} : { scheduled_for: new Date(at).toISOString() };
  return c.json({
    success: true,
    ...ids,
    execution_ids: executionIds,
    message: at === undefined ? "Workflow triggered successfully" : "Workflow scheduled successfully",
    ...scheduled,
    data: ids,
  }, 201);
}

/** POST /workflows/trigger and /workflows/send (the advanced form, with per-step overrides). */
export function workflowStartRoutes(deps: Deps) {
  const app = newRouter();
  const responses = { 201: { description: "Accepted: the trigger tracks the run", ...json(WorkflowTriggered) } };

  app.openapi(
    createRoute({
      method: "post",
      path: "/trigger",
      tags: tag("Workflows"),
      summary: "Start a workflow for a contact, the contacts carrying ALL given tags, or everyone",
      description:
        "Starts a workflow, named by `workflow_id` or `workflow_name`, for one contact, the contacts carrying all " +
        "the `tags`, or everyone. `variables` apply to every step, `channel_variables` per channel; `trigger_at` " +
        "schedules the start. Answers 201 with the `trigger_id` to follow.",
      parameters: SEND_HEADERS,
      request: { body: jsonBody(TriggerWorkflowBody, TRIGGER_WORKFLOW_EXAMPLES) },
      responses,
    }),
    async (c) => await start(deps, c, c.req.valid("json")),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/send",
      tags: tag("Workflows"),
      summary: "Start a workflow with per-step overrides (variables, delay_minutes, is_active) and metadata",
      description:
        "The advanced start: as `/workflows/trigger`, plus `steps_override` keyed by `step_order` (variables, " +
        "delay_minutes, is_active for this run only) and `metadata`.",
      parameters: SEND_HEADERS,
      request: { body: jsonBody(SendWorkflowBody, SEND_WORKFLOW_EXAMPLES) },
      responses,
    }),
    async (c) => await start(deps, c, c.req.valid("json")),
  );

  return app;
}

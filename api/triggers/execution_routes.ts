import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import type { Channel } from "../../shared/providers/types.ts";
import {
  errors,
  Execution,
  ExecutionList,
  ExecutionParams,
  JobList,
  JobsParams,
  PageQuery,
} from "../messages/schemas.ts";
import { jsonResponse } from "../../shared/http/schemas.ts";
import { findExecution, listExecutions, listJobs } from "./tracking.ts";
import { tag, type TagName } from "../../shared/http/openapi.ts";

interface Options {
  /** The channel listed and looked up; undefined on /messages (an execution of any channel by id). */
  channel?: Channel;
  /** Channel listed at `listPath` (email on /messages). */
  listChannel: Channel;
  /** Path of the list: "/" on /messages, "/executions" elsewhere. */
  listPath: string;
  tag: TagName;
}

/** How the summaries name a channel. */
const LABELS: Record<Channel, string> = { email: "email", sms: "SMS", whatsapp: "WhatsApp", push: "push" };

/**
 * Adds the execution views of a channel to its router: GET /executions/{id} (an execution, or a
 * trigger id meaning its execution for that channel), GET <listPath> (page & limit) and
 * GET /executions/{execution_id}/jobs (per-recipient messages).
 */
export function addExecutionRoutes(app: OpenAPIHono<AppEnv>, deps: Deps, options: Options): void {
  const tags = tag(options.tag);
  const label = LABELS[options.listChannel];
  const notFound = () => new NotFoundError("Execution not found", "execution_not_found");

  app.openapi(
    createRoute({
      method: "get",
      path: "/executions/{id}",
      tags,
      summary: `One ${label} execution, by its id or its trigger's id`,
      description: "An execution is one channel's share of a send: its status and counts of sent, failed and " +
        "filtered recipients. A trigger id finds the trigger's execution on this channel.",
      request: { params: ExecutionParams },
      responses: { 200: jsonResponse(Execution, "The execution"), ...errors(404) },
    }),
    async (c) => {
      const execution = await findExecution(deps, c.get("team").id, c.req.valid("param").id, options.channel);
      if (!execution) throw notFound();
      return c.json(execution as never, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: options.listPath,
      tags,
      summary: `List ${label} executions, newest first`,
      description: "Page pagination (`page`, `limit`).",
      request: { query: PageQuery },
      responses: { 200: jsonResponse(ExecutionList, "A page of executions"), ...errors(400) },
    }),
    async (c) => {
      const { page, limit } = c.req.valid("query");
      return c.json(await listExecutions(deps, c.get("team").id, options.listChannel, page, limit) as never, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/executions/{execution_id}/jobs",
      tags,
      summary: `The per-recipient messages of one ${label} execution`,
      description: "One row a recipient: address, status, the provider's message id, the error when it failed, " +
        "the cost, and when it was created and sent.",
      request: { params: JobsParams, query: PageQuery },
      responses: { 200: jsonResponse(JobList, "A page of messages"), ...errors(400, 404) },
    }),
    async (c) => {
      const { page, limit } = c.req.valid("query");
      const execution = await findExecution(deps, c.get("team").id, c.req.valid("param").execution_id, options.channel);
      if (!execution) throw notFound();
      return c.json(await listJobs(deps, execution, page, limit) as never, 200);
    },
  );
}

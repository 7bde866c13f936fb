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

interface Options {
  /** The channel listed and looked up; undefined on /messages (an execution of any channel by id). */
  channel?: Channel;
  /** Channel listed at `listPath` (email on /messages). */
  listChannel: Channel;
  /** Path of the list: "/" on /messages, "/executions" elsewhere. */
  listPath: string;
  tag: string;
}

/**
 * Adds the execution views of a channel to its router: GET /executions/{id} (an execution, or a
 * trigger id meaning its execution for that channel), GET <listPath> (page & limit) and
 * GET /executions/{execution_id}/jobs (per-recipient messages).
 */
export function addExecutionRoutes(app: OpenAPIHono<AppEnv>, deps: Deps, options: Options): void {
  const tags = [options.tag];
  const notFound = () => new NotFoundError("Execution not found", "execution_not_found");

  app.openapi(
    createRoute({
      method: "get",
      path: "/executions/{id}",
      tags,
      summary: "An execution (or a trigger's execution on this channel)",
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
      summary: `List ${options.listChannel} executions, newest first`,
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
      summary: "The per-recipient messages of an execution",
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

import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { completeTriggers } from "../../shared/workflows/complete.ts";
import { workflowChanges } from "../../shared/changes.ts";
import { listExecutions } from "./executions.ts";
import { deleteWorkflow, listWorkflows, requireWorkflow, workflowJson } from "./queries.ts";
import { saveNewWorkflow, saveWorkflowChanges } from "./edits.ts";
import {
  CreateWorkflowBody,
  DeletedWorkflow,
  ExecutionList,
  ListQuery,
  PageQuery,
  UpdateWorkflowBody,
  WorkflowDetails,
  WorkflowList,
  WorkflowParam,
  WorkflowSchema,
} from "./schemas.ts";
import { workflowStartRoutes } from "./start_routes.ts";
import { workflowStatistics } from "./statistics.ts";
import { tag } from "../../shared/http/openapi.ts";
import { jsonBody } from "../../shared/http/schemas.ts";
import { CREATE_WORKFLOW_EXAMPLES, UPDATE_WORKFLOW_EXAMPLES } from "./examples.ts";

const tags = tag("Workflows");
const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

function totalPages(total: number, limit: number): number {
  return Math.ceil(total / limit);
}

/** Workflow definitions, statistics and history under /api/v1/workflows. */
export function workflowsRoutes(deps: Deps) {
  const app = newRouter();
  app.route("/", workflowStartRoutes(deps));

  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags,
      summary: "Create an event-driven workflow",
      description: "A workflow runs its active steps in `step_order`, each on its channel with a template " +
        "(`configuration.template_id` names a template key or id) after `delay_minutes`. It starts when an event " +
        "named `event_type` is sent, or through `POST /workflows/trigger`. `conditions` (tags, segment, cooldown) " +
        "filter who it reaches.",
      request: { body: jsonBody(CreateWorkflowBody, CREATE_WORKFLOW_EXAMPLES) },
      responses: { 201: { description: "The workflow", ...json(WorkflowSchema) } },
    }),
    async (c) => {
      const workflow = await saveNewWorkflow(deps.sql, c.get("team").id, c.req.valid("json"));
      return c.json(workflowJson(workflow), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags,
      summary: "List workflows",
      description:
        "Page pagination (`page`, `limit` up to 100), filtered by `event_type`, `is_active` or a `search` in name " +
        "and description.",
      request: { query: ListQuery },
      responses: { 200: { description: "A page of workflows, newest first", ...json(WorkflowList) } },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const { workflows, total } = await listWorkflows(deps.sql, c.get("team").id, q, q);
      return c.json({
        workflows: workflows.map(workflowJson),
        total,
        page: q.page,
        totalPages: totalPages(total, q.limit),
        limit: q.limit,
      }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{id}",
      tags,
      summary: "Workflow details with statistics",
      description:
        "The workflow with its runs' statistics: per channel sent, failed and rates, the totals and the progress." +
        "The workflow with its runs' statistics: per channel sent, failed and rates, the totals and the progress.",
      request: { params: WorkflowParam },
      responses: { 200: { description: "The statistics view", ...json(WorkflowDetails) } },
    }),
    async (c) => {
      const workflow = await requireWorkflow(deps.sql, c.get("team").id, c.req.valid("param").id);
      const stats = await workflowStatistics(deps.sql, workflow, deps.now());
      return c.json({ ...workflowJson(workflow), ...stats }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/{id}",
      tags,
      summary: "Update a workflow (steps, when given, replace the steps)",
      description: "Changes the fields given; `steps`, when given, replace every step.",
      request: { params: WorkflowParam, body: jsonBody(UpdateWorkflowBody, UPDATE_WORKFLOW_EXAMPLES) },
      responses: { 200: { description: "The workflow", ...json(WorkflowSchema) } },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const workflow = await saveWorkflowChanges(deps.sql, c.get("team").id, id, c.req.valid("json"));
      return c.json(workflowJson(workflow), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/{id}",
      tags,
      summary: "Delete a workflow and its executions",
      description: "Deletes the workflow and its execution history; its event no longer starts it.",
      request: { params: WorkflowParam },
      responses: { 200: { description: "Deleted", ...json(DeletedWorkflow) } },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const teamId = c.get("team").id;
      const triggers = await deleteWorkflow(deps.sql, teamId, id);
      if (!triggers) throw new NotFoundError("Workflow not found", "workflow_not_found");
      workflowChanges.note();
      await completeTriggers(deps, triggers);
      return c.json({ deleted: true, id }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/{id}/executions",
      tags,
      summary: "Execution history of a workflow",
      description:
        "One execution per contact reached, newest first, with the state of each step (`PENDING`, `PROCESSING`, " +
        "`SCHEDULED`, `COMPLETED`, `FAILED`).",
      request: { params: WorkflowParam, query: PageQuery },
      responses: { 200: { description: "A page of executions, newest first", ...json(ExecutionList) } },
    }),
    async (c) => {
      const workflow = await requireWorkflow(deps.sql, c.get("team").id, c.req.valid("param").id);
      const q = c.req.valid("query");
      const { executions, total } = await listExecutions(deps.sql, workflow.id, workflow.steps, q);
      return c.json({ executions, total, page: q.page, totalPages: totalPages(total, q.limit), limit: q.limit }, 200);
    },
  );

  return app;
}

import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { completeTriggers } from "../../shared/workflows/complete.ts";
import { workflowChanges } from "../../shared/changes.ts";
import { listExecutions } from "./executions.ts";
import {
  checkTemplates,
  createWorkflow,
  deleteWorkflow,
  listWorkflows,
  requireWorkflow,
  updateWorkflow,
  workflowJson,
} from "./queries.ts";
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

const tags = ["Workflows"];
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
      request: { body: { ...json(CreateWorkflowBody), required: true } },
      responses: { 201: { description: "The workflow", ...json(WorkflowSchema) } },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const teamId = c.get("team").id;
      await checkTemplates(deps.sql, teamId, body.steps);
      const workflow = await createWorkflow(deps.sql, teamId, body);
      workflowChanges.note();
      return c.json(workflowJson(workflow), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags,
      summary: "List workflows",
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
      request: { params: WorkflowParam, body: { ...json(UpdateWorkflowBody), required: true } },
      responses: { 200: { description: "The workflow", ...json(WorkflowSchema) } },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const teamId = c.get("team").id;
      const { id } = c.req.valid("param");
      if (body.steps) {
        await requireWorkflow(deps.sql, teamId, id);
        await checkTemplates(deps.sql, teamId, body.steps);
      }
      const workflow = await updateWorkflow(deps.sql, teamId, id, body);
      if (!workflow) throw new NotFoundError("Workflow not found", "workflow_not_found");
      workflowChanges.note();
      return c.json(workflowJson(workflow), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/{id}",
      tags,
      summary: "Delete a workflow and its executions",
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

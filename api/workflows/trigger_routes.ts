import { createRoute, z } from "@hono/zod-openapi";
import type { Db } from "../../shared/db.ts";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { RecordId } from "../../shared/http/schemas.ts";
import { findTrigger, notOfKind } from "../triggers/tracking.ts";
import type { WorkflowStart } from "../../shared/workflows/start.ts";
import { iso } from "./queries.ts";
import { tag } from "../../shared/http/openapi.ts";

const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

const Params = z.object({ trigger_id: RecordId.openapi({ param: { name: "trigger_id", in: "path" } }) });
const Query = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(1000).default(1000),
});

const ExecutionStatus = z.enum(["PENDING", "PROCESSING", "SCHEDULED", "COMPLETED", "FAILED"]);

/** GET /triggers/{trigger_id}/workflow. */
const WorkflowTrigger = z.object({
  trigger_id: z.string(),
  flow_type: z.literal("workflow"),
  trigger_type: z.string(),
  workflow_id: z.string().nullable(),
  workflow_name: z.string().nullable(),
  workflows: z.array(z.object({ id: z.string(), name: z.string() })),
  status: z.enum(["pending", "processing", "completed", "failed"]),
  summary: z.object({ total_contacts: z.number(), sent: z.number(), failed: z.number(), filtered: z.number() }),
  note: z.string().optional().openapi({ description: "Why the trigger reached no one, once completed" }),
  created_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  scheduled_for: z.string().nullable(),
  executions: z.array(z.object({
    id: z.string(),
    workflow_id: z.string(),
    contact_id: z.string().nullable(),
    status: ExecutionStatus,
    current_step: z.number().nullable(),
  })),
  total_executions: z.number(),
  page: z.number(),
  limit: z.number(),
}).openapi("WorkflowTrigger");

/** The workflows a trigger started; before the worker took it up, the one an API start names. */
async function workflowsOf(deps: Deps, teamId: string, triggerId: string) {
  const db = deps.sql;
  const rows = await db<{ id: string; name: string }[]>`
    select w.id, w.name from workflow_runs r join workflows w on w.id = r.workflow_id
    where r.trigger_id = ${triggerId} order by r.created_at, w.id`;
  if (rows.length > 0) return rows;
  const id = (await deps.sendState.trigger(triggerId))?.record.workflow_id;
  if (!id) return [];
  return await db<{ id: string; name: string }[]>`
    select id, name from workflows where team_id = ${teamId} and id = ${id}`;
}

async function executionsOf(db: Db, triggerId: string, page: { page: number; limit: number }) {
  const [{ total }]: [{ total: number }] = await db`
    select count(*)::int as total from workflow_executions where trigger_id = ${triggerId}`;
  const rows = await db<
    { id: string; workflow_id: string; contact_id: string | null; status: string; current_step: number | null }[]
  >`
    select id, workflow_id, contact_id, status, current_step from workflow_executions
    where trigger_id = ${triggerId} order by created_at, id
    limit ${page.limit} offset ${(page.page - 1) * page.limit}`;
  return { total, rows: rows as z.infer<typeof WorkflowTrigger>["executions"] };
}

/**
 * The execution a start for one contact promised (its id is in the start's answer) while the start
 * waits for its time: SCHEDULED until the worker creates it.
 */
async function promisedExecution(db: Db, triggerId: string) {
  const [row]: [{ spec: WorkflowStart }?] = await db`
    select spec from triggers where id = ${triggerId} and status = 'pending' and spec is not null`;
  const start = row?.spec;
  if (!start?.execution_id || !start.workflow_id || start.recipient?.type !== "contact") return undefined;
  return {
    id: start.execution_id,
    workflow_id: start.workflow_id,
    contact_id: start.recipient.contact_id,
    status: "SCHEDULED" as const,
    current_step: null,
  };
}

/** GET /api/v1/triggers/{trigger_id}/workflow: the workflow run a trigger started, and its executions. */
export function triggerWorkflowRoutes(deps: Deps) {
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "get",
      path: "/{trigger_id}/workflow",
      tags: tag("Tracking"),
      summary: "The executions of a workflow trigger",
      description:
        "For a trigger of a workflow start or an event: the workflow, its status and one execution per contact with " +
        "its current step.",
      request: { params: Params, query: Query },
      responses: { 200: { description: "The workflow trigger", ...json(WorkflowTrigger) } },
    }),
    async (c) => {
      const { trigger_id } = c.req.valid("param");
      const trigger = await findTrigger(deps, c.get("team").id, trigger_id);
      if (!trigger) throw new NotFoundError("Trigger not found", "trigger_not_found");
      if (trigger.flow_type !== "workflow") throw notOfKind("workflow");
      const q = c.req.valid("query");
      const [workflows, executions] = await Promise.all([
        workflowsOf(deps, c.get("team").id, trigger.id),
        executionsOf(deps.sql, trigger.id, q),
      ]);
      const promised = executions.total === 0 && trigger.scheduled_for
        ? await promisedExecution(deps.sql, trigger.id)
        : undefined;
      if (promised) {
        executions.total = 1;
        if (q.page === 1) executions.rows = [promised];
      }
      return c.json({
        trigger_id: trigger.id,
        flow_type: "workflow" as const,
        trigger_type: trigger.trigger_type,
        workflow_id: workflows[0]?.id ?? null,
        workflow_name: workflows[0]?.name ?? null,
        workflows,
        status: trigger.status,
        summary: trigger.summary,
        ...(trigger.note === undefined ? {} : { note: trigger.note }),
        created_at: trigger.created_at.toISOString(),
        started_at: iso(trigger.started_at),
        completed_at: iso(trigger.completed_at),
        scheduled_for: iso(trigger.scheduled_for),
        executions: executions.rows,
        total_executions: executions.total,
        page: q.page,
        limit: q.limit,
      }, 200);
    },
  );
  return app;
}

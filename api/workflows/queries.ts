import { asJson, type Db, type Sql } from "../../shared/db.ts";
import { NotFoundError, ValidationError } from "../../shared/errors.ts";
import {
  isUuid,
  stepsOf,
  withSteps,
  type Workflow,
  workflowById,
  type WorkflowRow,
} from "../../shared/workflows/definitions.ts";
import type { CreateWorkflowData, StepInputData, UpdateWorkflowData } from "./schemas.ts";

export type { StepRow, Workflow } from "../../shared/workflows/definitions.ts";

/**
 * Checks that every step names an existing template of its channel: 400 "Template '…' not found for
 * team"; and that each of its fallback channels has a template under that key, approved for SMS and
 * WhatsApp (as a send's fallback channels: api/sending/fallback.ts).
 */
export async function checkTemplates(db: Db, teamId: string, steps: StepInputData[]): Promise<void> {
  const names = [...new Set(steps.map((s) => s.configuration.template_id))];
  const found = await db<{ id: string; channel: string; key: string; status: string }[]>`
    select id, channel, key, status from templates
    where team_id = ${teamId} and (key = any(${names}::text[]) or id::text = any(${names}::text[]))`;
  for (const [i, step] of steps.entries()) {
    const name = step.configuration.template_id;
    const ok = found.some((t) => t.channel === step.channel_type && (t.key === name || t.id === name));
    if (!ok) {
      throw new ValidationError(`Template '${name}' not found for team`, "template_not_found", {
        details: { field: `steps.${i}.configuration.template_id`, code: "not_found" },
      });
    }
    for (const channel of step.configuration.fallback_channels ?? []) {
      const template = found.find((t) => t.channel === channel && t.key === name);
      const approved = template && (channel === "email" || template.status === "approved");
      if (approved) continue;
      const message = template
        ? `Template '${name}' is not approved for fallback channel ${channel}`
        : `Template '${name}' not found for fallback channel ${channel}`;
      throw new ValidationError(message, "invalid_fallback", {
        details: {
          field: `steps.${i}.configuration.fallback_channels`,
          code: template ? "template_not_approved" : "template_not_found",
        },
      });
    }
  }
}

function stepRows(workflowId: string, steps: StepInputData[]) {
  return steps.map((s) => ({
    workflow_id: workflowId,
    step_order: s.step_order,
    channel_type: s.channel_type,
    step_name: s.step_name ?? `Step ${s.step_order}`,
    is_active: s.is_active ?? true,
    configuration: asJson(s.configuration),
  }));
}

async function insertSteps(db: Db, workflowId: string, steps: StepInputData[]): Promise<void> {
  await db`insert into workflow_steps ${
    db(
      stepRows(workflowId, steps),
      "workflow_id",
      "step_order",
      "channel_type",
      "step_name",
      "is_active",
      "configuration",
    )
  }`;
}

/** Creates a workflow with its steps. */
export async function createWorkflow(sql: Sql, teamId: string, input: CreateWorkflowData): Promise<Workflow> {
  return await sql.begin(async (tx) => {
    const [row]: [WorkflowRow] = await tx`
      insert into workflows ${
      tx({
        team_id: teamId,
        name: input.name,
        description: input.description ?? "",
        event_type: input.event_type,
        is_active: input.is_active ?? true,
        conditions: asJson(input.conditions ?? {}),
      })
    }
      returning *`;
    await insertSteps(tx, row.id, input.steps);
    return { ...row, steps: (await stepsOf(tx, [row.id])).get(row.id)! };
  });
}

/** The team's workflow `id` with its steps, if there is one. */
export async function findWorkflow(db: Db, teamId: string, id: string): Promise<Workflow | undefined> {
  return await workflowById(db, id, teamId);
}

/** The team's workflow `id`, or 404 'Workflow not found'. */
export async function requireWorkflow(db: Db, teamId: string, id: string): Promise<Workflow> {
  const workflow = await findWorkflow(db, teamId, id);
  if (!workflow) throw new NotFoundError("Workflow not found", "workflow_not_found");
  return workflow;
}

/** What starting a workflow needs to know of it. */
export interface WorkflowHead {
  id: string;
  name: string;
  is_active: boolean;
}

/**
 * The team's workflow named by id, or by name (the newest of that name, an active one first);
 * one indexed read.
 */
export async function findWorkflowHead(
  db: Db,
  teamId: string,
  by: { id?: string; name?: string },
): Promise<WorkflowHead | undefined> {
  if (by.id !== undefined) {
    if (!isUuid(by.id)) return undefined;
    const [row]: [WorkflowHead?] = await db`
      select id, name, is_active from workflows where team_id = ${teamId} and id = ${by.id}`;
    return row;
  }
  const [row]: [WorkflowHead?] = await db`
    select id, name, is_active from workflows where team_id = ${teamId} and name = ${by.name ?? ""}
    order by is_active desc, created_at desc, id desc limit 1`;
  return row;
}

/** Filters of the workflow list; every one given must hold. */
export interface WorkflowFilter {
  event_type?: string;
  is_active?: boolean;
  /** Substring of the name or the description, case-insensitive. */
  search?: string;
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function listWhere(db: Db, teamId: string, f: WorkflowFilter) {
  return db`
    where team_id = ${teamId}
    ${f.event_type === undefined ? db`` : db`and event_type = ${f.event_type}`}
    ${f.is_active === undefined ? db`` : db`and is_active = ${f.is_active}`}
    ${
    f.search === undefined || f.search === ""
      ? db``
      : db`and (name ilike ${likePattern(f.search)} or description ilike ${likePattern(f.search)})`
  }`;
}

/** One page of the team's workflows, newest first, and how many match in all. */
export async function listWorkflows(
  db: Db,
  teamId: string,
  filter: WorkflowFilter,
  page: { page: number; limit: number },
): Promise<{ workflows: Workflow[]; total: number }> {
  const [{ total }]: [{ total: number }] = await db`
    select count(*)::int as total from workflows ${listWhere(db, teamId, filter)}`;
  const rows = await db<WorkflowRow[]>`
    select * from workflows ${listWhere(db, teamId, filter)}
    order by created_at desc, id desc
    limit ${page.limit} offset ${(page.page - 1) * page.limit}`;
  return { workflows: await withSteps(db, rows), total };
}

/** Changes the fields given (steps, when given, replace the steps); undefined when there is no such workflow. */
export async function updateWorkflow(
  sql: Sql,
  teamId: string,
  id: string,
  patch: UpdateWorkflowData,
): Promise<Workflow | undefined> {
  if (!isUuid(id)) return undefined;
  return await sql.begin(async (tx) => {
    const fields: Record<string, unknown> = {};
    if (patch.name !== undefined) fields.name = patch.name;
    if (patch.description !== undefined) fields.description = patch.description ?? "";
    if (patch.event_type !== undefined) fields.event_type = patch.event_type;
    if (patch.is_active !== undefined) fields.is_active = patch.is_active;
    if (patch.conditions !== undefined) fields.conditions = asJson(patch.conditions ?? {});
    const columns = Object.keys(fields);
    const [row]: [WorkflowRow?] = columns.length > 0
      ? await tx`update workflows set ${tx(fields, ...columns)}, updated_at = now()
          where team_id = ${teamId} and id = ${id} returning *`
      : await tx`update workflows set updated_at = now() where team_id = ${teamId} and id = ${id} returning *`;
    if (!row) return undefined;
    if (patch.steps) {
      await tx`delete from workflow_steps where workflow_id = ${id}`;
      await insertSteps(tx, id, patch.steps);
    }
    return { ...row, steps: (await stepsOf(tx, [id])).get(id)! };
  });
}

/**
 * Deletes the team's workflow (its executions go with it); undefined when there is none, else the
 * triggers that were still running executions of it (they may be complete now).
 */
export async function deleteWorkflow(db: Db, teamId: string, id: string): Promise<string[] | undefined> {
  if (!isUuid(id)) return undefined;
  const running = await db<{ trigger_id: string }[]>`
    select distinct e.trigger_id from workflow_executions e
    where e.team_id = ${teamId} and e.workflow_id = ${id} and e.current_step is not null
    union
    select r.trigger_id from workflow_runs r where r.team_id = ${teamId} and r.workflow_id = ${id} and not r.fanout_done`;
  const result = await db`delete from workflows where team_id = ${teamId} and id = ${id}`;
  return result.count > 0 ? running.map((r) => r.trigger_id) : undefined;
}

/** The distinct event types of the team's workflows. */
export async function teamEventTypes(db: Db, teamId: string): Promise<string[]> {
  const rows = await db<{ event_type: string }[]>`
    select distinct event_type from workflows where team_id = ${teamId}`;
  return rows.map((r) => r.event_type);
}

/** A timestamp as answered (ISO 8601 UTC with milliseconds), or null. */
export function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/** A workflow as the API answers it. */
export function workflowJson(w: Workflow) {
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    event_type: w.event_type,
    is_active: w.is_active,
    conditions: w.conditions ?? {},
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
    steps: w.steps.map((s) => ({
      id: s.id,
      step_order: s.step_order,
      channel_type: s.channel_type,
      step_name: s.step_name,
      is_active: s.is_active,
      configuration: s.configuration,
    })),
  };
}

import type { Db } from "../db.ts";

/** What a start may require of a contact: every condition given must hold. */
export interface WorkflowConditions {
  tags?: string[];
  segment_id?: string;
  cooldown_minutes?: number;
}

/** A workflow row as stored. */
export interface WorkflowRow {
  id: string;
  team_id: string;
  name: string;
  description: string;
  event_type: string;
  is_active: boolean;
  conditions: WorkflowConditions;
  created_at: Date;
  updated_at: Date;
}

/** A step's configuration as stored (other keys are kept as the client gave them). */
export type StepConfiguration = {
  template_id: string;
  delay_minutes: number;
  variables?: Record<string, unknown>;
  conversation_category?: "MARKETING" | "UTILITY" | "AUTHENTICATION";
} & Record<string, unknown>;

/** A step row as stored. */
export interface StepRow {
  id: string;
  workflow_id: string;
  step_order: number;
  channel_type: "email" | "sms" | "whatsapp";
  step_name: string;
  is_active: boolean;
  configuration: StepConfiguration;
}

/** A workflow with its steps in step_order. */
export interface Workflow extends WorkflowRow {
  steps: StepRow[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `id` is a UUID (Postgres refuses anything else for a uuid column). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/** The steps of these workflows, each list in step_order. */
export async function stepsOf(db: Db, workflowIds: string[]): Promise<Map<string, StepRow[]>> {
  const map = new Map<string, StepRow[]>(workflowIds.map((id) => [id, []]));
  if (workflowIds.length === 0) return map;
  const rows = await db<StepRow[]>`
    select id, workflow_id, step_order, channel_type, step_name, is_active, configuration from workflow_steps
    where workflow_id = any(${workflowIds}::uuid[]) order by workflow_id, step_order`;
  for (const row of rows) map.get(row.workflow_id)?.push(row);
  return map;
}

/** Workflow rows with their steps attached. */
export async function withSteps(db: Db, rows: WorkflowRow[]): Promise<Workflow[]> {
  const steps = await stepsOf(db, rows.map((r) => r.id));
  return rows.map((r) => ({ ...r, steps: steps.get(r.id)! }));
}

/** The workflow `id` with its steps (of the team `teamId`, when given). */
export async function workflowById(db: Db, id: string, teamId?: string): Promise<Workflow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row]: [WorkflowRow?] = teamId === undefined
    ? await db`select * from workflows where id = ${id}`
    : await db`select * from workflows where team_id = ${teamId} and id = ${id}`;
  return row ? (await withSteps(db, [row]))[0] : undefined;
}

/** The team's active workflows listening to the event `name`. */
export async function workflowsForEvent(db: Db, teamId: string, name: string): Promise<Workflow[]> {
  const rows = await db<WorkflowRow[]>`
    select * from workflows where team_id = ${teamId} and event_type = ${name} and is_active
    order by created_at, id`;
  return await withSteps(db, rows);
}

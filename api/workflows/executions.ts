import type { Db } from "../../shared/db.ts";
import { iso, type StepRow } from "./queries.ts";

type ExecutionStatus = "PENDING" | "PROCESSING" | "SCHEDULED" | "COMPLETED" | "FAILED";

interface ExecutionRow {
  id: string;
  trigger_id: string;
  contact_id: string | null;
  status: ExecutionStatus;
  current_step: number | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

interface StepRunRow {
  execution_id: string;
  step_order: number;
  channel_type: "email" | "sms" | "whatsapp";
  status: string;
  message_id: string | null;
  error: string | null;
}

/** One step of an execution as answered: what it did, or what it is waiting for. */
interface StepState {
  step_order: number;
  channel_type: "email" | "sms" | "whatsapp";
  status: string;
  message_id?: string;
  error?: string;
}

function stepStates(execution: ExecutionRow, runs: StepRunRow[], steps: StepRow[]): StepState[] {
  const states: StepState[] = runs.map((r) => ({
    step_order: r.step_order,
    channel_type: r.channel_type,
    status: r.status,
    ...(r.message_id ? { message_id: r.message_id } : {}),
    ...(r.error ? { error: r.error } : {}),
  }));
  if (execution.current_step === null) return states;
  const current = execution.current_step;
  for (const step of steps) {
    if (!step.is_active || step.step_order < current || runs.some((r) => r.step_order === step.step_order)) continue;
    const waiting = step.step_order === current && execution.status !== "PENDING" ? execution.status : "PENDING";
    states.push({ step_order: step.step_order, channel_type: step.channel_type, status: waiting });
  }
  return states;
}

/** Executions as answered, each with its steps' states (one read of their step runs). */
async function withStepStates(db: Db, rows: ExecutionRow[], steps: StepRow[]) {
  const runs = rows.length === 0 ? [] : await db<StepRunRow[]>`
    select execution_id, step_order, channel_type, status, message_id, error from workflow_step_runs
    where execution_id = any(${rows.map((r) => r.id)}::uuid[]) order by execution_id, step_order`;
  return rows.map((r) => ({
    id: r.id,
    trigger_id: r.trigger_id,
    contact_id: r.contact_id,
    status: r.status,
    current_step: r.current_step,
    created_at: r.created_at.toISOString(),
    started_at: iso(r.started_at),
    completed_at: iso(r.completed_at),
    steps: stepStates(r, runs.filter((s) => s.execution_id === r.id), steps),
  }));
}

/** An execution as answered. */
export type ExecutionView = Awaited<ReturnType<typeof withStepStates>>[number];

/** One page of a workflow's executions, newest first, each with its steps' states. */
export async function listExecutions(
  db: Db,
  workflowId: string,
  steps: StepRow[],
  page: { page: number; limit: number },
) {
  // The running total (shared/migrations/029_workflow_stats.sql): counting the rows grew with the history.
  const [{ total }]: [{ total: number }] = await db`
    select coalesce((select executions from workflow_stats where workflow_id = ${workflowId}), 0)::int as total`;
  const rows = await db<ExecutionRow[]>`
    select id, trigger_id, contact_id, status, current_step, created_at, started_at, completed_at
    from workflow_executions where workflow_id = ${workflowId}
    order by created_at desc, id desc
    limit ${page.limit} offset ${(page.page - 1) * page.limit}`;
  return { executions: await withStepStates(db, rows, steps), total };
}

/** Where a keyset page of executions starts: after this (created_at, id), newest first. */
export interface ExecutionCursor {
  createdAt: Date;
  id: string;
}

/**
 * A keyset page of a workflow's executions, newest first (on the index workflow_executions_workflow,
 * so a deep page costs what the first does), and whether older ones follow.
 */
export async function executionsAfter(
  db: Db,
  workflowId: string,
  steps: StepRow[],
  options: { limit: number; after?: ExecutionCursor },
): Promise<{ executions: ExecutionView[]; hasMore: boolean }> {
  const { after } = options;
  const rows = await db<ExecutionRow[]>`
    select id, trigger_id, contact_id, status, current_step, created_at, started_at, completed_at
    from workflow_executions
    where workflow_id = ${workflowId}
      ${after ? db`and (created_at, id) < (${after.createdAt}, ${after.id}::uuid)` : db``}
    order by created_at desc, id desc
    limit ${options.limit + 1}`;
  const page = rows.slice(0, options.limit);
  return { executions: await withStepStates(db, page, steps), hasMore: rows.length > options.limit };
}

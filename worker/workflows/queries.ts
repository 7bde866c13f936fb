import { bulkRows } from "../../shared/bulk.ts";
import { asJson, type Db } from "../../shared/db.ts";
import type { RunContext } from "./variables.ts";

/** Records the contexts of starts (one row per start and workflow; a redelivered start changes nothing). */
export async function insertRuns(db: Db, runs: (RunContext & { fanout_done: boolean })[]): Promise<void> {
  if (runs.length === 0) return;
  const rows = runs.map((run) => ({
    trigger_id: run.trigger_id,
    workflow_id: run.workflow_id,
    team_id: run.team_id,
    source: run.source,
    sandbox: run.sandbox,
    variables: asJson(run.variables),
    channel_variables: asJson(run.channel_variables),
    steps_override: asJson(run.steps_override),
    event: run.event === null ? null : asJson(run.event),
    metadata: asJson(run.metadata),
    fanout_done: run.fanout_done,
  }));
  await db`insert into workflow_runs ${db(rows)} on conflict (trigger_id, workflow_id) do nothing`;
}

/** The contexts of a workflow's starts, by trigger id. */
export async function loadRuns(db: Db, workflowId: string, triggerIds: string[]): Promise<RunContext[]> {
  if (triggerIds.length === 0) return [];
  return await db<RunContext[]>`
    select trigger_id, workflow_id, team_id, source, sandbox, variables, channel_variables, steps_override, event,
      metadata
    from workflow_runs where workflow_id = ${workflowId} and trigger_id = any(${triggerIds}::uuid[])`;
}

/** Marks the fan-out of a start's workflow as finished. */
export async function markFanoutDone(db: Db, triggerId: string, workflowId: string): Promise<void> {
  await db`update workflow_runs set fanout_done = true where trigger_id = ${triggerId} and workflow_id = ${workflowId}`;
}

/** A new execution: its start, its contact, and its first step with when it is due (none: nothing to run). */
export interface NewExecution {
  id: string;
  team_id: string;
  workflow_id: string;
  trigger_id: string;
  contact_id: string;
  source: "api" | "event";
  first: { step_order: number; due: number } | undefined;
}

/**
 * Creates executions at their first step (one per contact and start: one already made is skipped)
 * in one statement, and answers the ids of those created.
 */
export async function insertExecutions(db: Db, executions: NewExecution[], now: number): Promise<Set<string>> {
  if (executions.length === 0) return new Set();
  const at = new Date(now).toISOString();
  const col = (f: (e: NewExecution) => string | number | null) => executions.map(f);
  const finished = col((e) => (e.first ? null : at));
  const rows = await db<{ id: string }[]>`
    insert into workflow_executions ${
    bulkRows(db, {
      id: { type: "uuid", values: col((e) => e.id) },
      team_id: { type: "uuid", values: col((e) => e.team_id) },
      workflow_id: { type: "uuid", values: col((e) => e.workflow_id) },
      trigger_id: { type: "uuid", values: col((e) => e.trigger_id) },
      contact_id: { type: "uuid", values: col((e) => e.contact_id) },
      source: { type: "text", values: col((e) => e.source) },
      status: {
        type: "text",
        values: col((e) => (!e.first ? "COMPLETED" : e.first.due > now ? "SCHEDULED" : "PENDING")),
      },
      current_step: { type: "int", values: col((e) => e.first?.step_order ?? null) },
      next_run_at: { type: "timestamptz", values: col((e) => (e.first ? new Date(e.first.due).toISOString() : null)) },
      created_at: { type: "timestamptz", value: at },
      updated_at: { type: "timestamptz", value: at },
      started_at: { type: "timestamptz", values: finished },
      completed_at: { type: "timestamptz", values: finished },
    })
  }
    on conflict do nothing
    returning id`;
  return new Set(rows.map((r) => r.id));
}

/** Executions due at the same step of a workflow at the same time: what one step job carries. */
export interface StepGroup {
  workflow_id: string;
  step_order: number;
  due: number;
  ids: string[];
}

/** A step group as the grouping queries return it (the due time as read: null for none). */
type StepGroupRow = Omit<StepGroup, "due"> & { due: Date | null };

function stepGroupOf(r: StepGroupRow): StepGroup {
  return { workflow_id: r.workflow_id, step_order: r.step_order, due: r.due?.getTime() ?? 0, ids: r.ids };
}

/**
 * The executions already made for these (start, workflow, contact) that wait for a step no job has
 * taken yet (PENDING or SCHEDULED), grouped by workflow, step and due time: a redelivered start job
 * enqueues them again.
 */
export async function waitingExecutions(
  db: Db,
  keys: { trigger_id: string; workflow_id: string; contact_id: string }[],
): Promise<StepGroup[]> {
  if (keys.length === 0) return [];
  const rows = await db<StepGroupRow[]>`
    select e.workflow_id, e.current_step as step_order, e.next_run_at as due, array_agg(e.id) as ids
    from workflow_executions e
    join unnest(${keys.map((k) => k.trigger_id)}::uuid[], ${keys.map((k) => k.workflow_id)}::uuid[],
      ${keys.map((k) => k.contact_id)}::uuid[]) as k(trigger_id, workflow_id, contact_id)
      on e.trigger_id = k.trigger_id and e.workflow_id = k.workflow_id and e.contact_id = k.contact_id
    where e.current_step is not null and e.status in ('PENDING', 'SCHEDULED')
    group by e.workflow_id, e.current_step, e.next_run_at`;
  return rows.map(stepGroupOf);
}

/** A claimed execution: what its step needs to know of it. */
export interface Claimed {
  id: string;
  trigger_id: string;
  contact_id: string | null;
}

/**
 * Takes the executions of the batch that are at `stepOrder` and not finished: the atomic check
 * that makes a duplicate, late or early step job act on nothing it should not.
 */
export async function claimStep(db: Db, ids: string[], stepOrder: number, now: number): Promise<Claimed[]> {
  const at = new Date(now);
  return await db<Claimed[]>`
    update workflow_executions set status = 'PROCESSING', started_at = coalesce(started_at, ${at}), updated_at = ${at}
    where id = any(${ids}::uuid[]) and current_step = ${stepOrder}
      and status in ('PENDING', 'SCHEDULED', 'PROCESSING')
    returning id, trigger_id, contact_id`;
}

/**
 * The executions among `ids` that are past `stepOrder`: those still running, grouped by their step
 * and due time, and the triggers of those that finished.
 */
export async function executionsPast(
  db: Db,
  ids: string[],
  stepOrder: number,
): Promise<{ ahead: StepGroup[]; finishedTriggerIds: string[] }> {
  const rows = await db<(Omit<StepGroupRow, "step_order"> & { step_order: number | null; trigger_ids: string[] })[]>`
    select workflow_id, current_step as step_order, next_run_at as due, array_agg(id) as ids,
      array_agg(distinct trigger_id) as trigger_ids
    from workflow_executions
    where id = any(${ids}::uuid[]) and (current_step > ${stepOrder} or current_step is null)
    group by workflow_id, current_step, next_run_at`;
  const ahead: StepGroup[] = [];
  const finishedTriggerIds: string[] = [];
  for (const r of rows) {
    if (r.step_order === null) finishedTriggerIds.push(...r.trigger_ids);
    else ahead.push(stepGroupOf({ ...r, step_order: r.step_order }));
  }
  return { ahead, finishedTriggerIds };
}

/** What one step did for one execution. */
export interface StepRun {
  execution_id: string;
  contact_id: string | null;
  status: "SENT" | "FAILED" | "FILTERED";
  message_id: string | null;
  error: string | null;
  cost_micros: number;
  /** The channel of the message recorded, when a fallback channel sent it instead of the step's own. */
  channel?: string;
}

/** Records what a step did for each execution (a step recorded already is left as it is). */
export async function recordStepRuns(
  db: Db,
  workflowId: string,
  step: { step_order: number; channel_type: string },
  runs: StepRun[],
): Promise<void> {
  if (runs.length === 0) return;
  const col = (f: (r: StepRun) => string | number | null) => runs.map(f);
  await db`
    insert into workflow_step_runs ${
    bulkRows(db, {
      execution_id: { type: "uuid", values: col((r) => r.execution_id) },
      step_order: { type: "int", value: step.step_order },
      workflow_id: { type: "uuid", value: workflowId },
      contact_id: { type: "uuid", values: col((r) => r.contact_id) },
      channel_type: { type: "text", values: col((r) => r.channel ?? step.channel_type) },
      status: { type: "text", values: col((r) => r.status) },
      message_id: { type: "text", values: col((r) => r.message_id) },
      error: { type: "text", values: col((r) => r.error) },
      cost_micros: { type: "bigint", values: col((r) => r.cost_micros) },
    })
  }
    on conflict (execution_id, step_order) do nothing`;
}

/**
 * Moves executions from `stepOrder` to the next step (SCHEDULED while it waits, PROCESSING when it
 * is due at once), or finishes them (FAILED when any of their steps failed, else COMPLETED).
 * Only executions still at `stepOrder` move, so two deliveries of one job never advance twice.
 * Answers the executions moved, with their status now.
 */
export async function advance(
  db: Db,
  ids: string[],
  stepOrder: number,
  next: { step_order: number; due: number } | undefined,
  now: number,
): Promise<{ id: string; status: string }[]> {
  if (ids.length === 0) return [];
  const at = new Date(now);
  return next
    ? await db<{ id: string; status: string }[]>`
      update workflow_executions set current_step = ${next.step_order},
        status = ${next.due > now ? "SCHEDULED" : "PROCESSING"}, next_run_at = ${new Date(next.due)}, updated_at = ${at}
      where id = any(${ids}::uuid[]) and current_step = ${stepOrder}
      returning id, status`
    : await db<{ id: string; status: string }[]>`
      update workflow_executions e set current_step = null, next_run_at = null, completed_at = ${at},
        updated_at = ${at},
        status = case when exists (
          select 1 from workflow_step_runs r where r.execution_id = e.id and r.status = 'FAILED'
        ) then 'FAILED' else 'COMPLETED' end
      where e.id = any(${ids}::uuid[]) and e.current_step = ${stepOrder}
      returning e.id, e.status`;
}

/**
 * Claims the cooldown of each contact for a workflow: answers the contacts that did not start it
 * within `minutes` (and records now as their last start). Atomic per contact: of two concurrent
 * events for one contact, one wins. `contactIds` must not repeat.
 */
export async function claimCooldowns(
  db: Db,
  workflowId: string,
  contactIds: string[],
  minutes: number,
  now: number,
): Promise<Set<string>> {
  if (contactIds.length === 0) return new Set();
  const at = new Date(now);
  const rows = await db<{ contact_id: string }[]>`
    insert into workflow_cooldowns (workflow_id, contact_id, last_started_at)
    select ${workflowId}, c, ${at} from unnest(${contactIds}::uuid[]) as c
    on conflict (workflow_id, contact_id) do update set last_started_at = excluded.last_started_at
      where workflow_cooldowns.last_started_at <= excluded.last_started_at - make_interval(secs => ${minutes * 60})
    returning contact_id`;
  return new Set(rows.map((r) => r.contact_id));
}

import type { Db } from "../../shared/db.ts";
import { listTemplates, type Template } from "../../shared/templates.ts";
import { StepChannel } from "../workflows/schemas.ts";

/** The channels a workflow step can send on, in the order the pages offer them. */
export const STEP_CHANNELS = StepChannel.options;

/** A channel a workflow step can send on. */
export type StepChannelName = (typeof STEP_CHANNELS)[number];

/** A workflow's latest start: when, and the trigger that follows it. */
export interface LastRun {
  trigger_id: string;
  created_at: Date;
}

/**
 * The latest start of each of these workflows (one index probe each, on workflow_runs_workflow);
 * a workflow never started is not in the map.
 */
export async function lastRuns(db: Db, workflowIds: string[]): Promise<Map<string, LastRun>> {
  if (workflowIds.length === 0) return new Map();
  const rows = await db<(LastRun & { workflow_id: string })[]>`
    select w.id as workflow_id, r.trigger_id, r.created_at
    from unnest(${workflowIds}::uuid[]) as w(id)
    cross join lateral (
      select trigger_id, created_at from workflow_runs where workflow_id = w.id
      order by created_at desc limit 1
    ) r`;
  return new Map(rows.map((r) => [r.workflow_id, { trigger_id: r.trigger_id, created_at: r.created_at }]));
}

/** The team's templates a step may name, per channel. */
export type StepTemplates = Record<StepChannelName, Template[]>;

/** The team's templates of every workflow channel, by key. */
export async function stepTemplates(db: Db, teamId: string): Promise<StepTemplates> {
  const lists = await Promise.all(STEP_CHANNELS.map((channel) => listTemplates(db, teamId, channel)));
  return Object.fromEntries(STEP_CHANNELS.map((channel, i) => [channel, lists[i]])) as StepTemplates;
}

/** The email address of each of these contacts of the team (one read by primary key); a deleted one is absent. */
export async function contactEmails(db: Db, teamId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db<{ id: string; email: string }[]>`
    select id, email from contacts where team_id = ${teamId} and id = any(${[...new Set(ids)]}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.email]));
}

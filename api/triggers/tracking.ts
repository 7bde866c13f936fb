import { NotFoundError } from "../../shared/errors.ts";
import type { Deps } from "../../shared/deps.ts";
import type { Db } from "../../shared/db.ts";
import type { Channel } from "../../shared/providers/types.ts";
import type { Attempt } from "../../shared/providers/failover.ts";
import type { TriggerState } from "../../shared/engine/send_state.ts";
import {
  addCounts,
  type Counts,
  countStatuses,
  finalStatus,
  type MessageStatus,
  type SendStatus,
  zeroCounts,
} from "../../shared/sending/trigger_record.ts";
import { toUsd } from "../../shared/money.ts";
import { stepCounts } from "../../shared/workflows/complete.ts";

/** An execution as the views show it. */
export interface ExecutionView {
  id: string;
  trigger_id: string;
  channel: Channel;
  status: SendStatus;
  total_contacts: number;
  sent_count: number;
  failed_count: number;
  filtered_count: number;
  created_at: Date;
  completed_at: Date | null;
}

/** A trigger as GET /triggers/{id} shows it. */
export interface TriggerView {
  id: string;
  flow_type: string;
  trigger_type: string;
  status: SendStatus;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  scheduled_for: Date | null;
  summary: Counts;
  /** Why a completed workflow trigger reached no one (see 007_trigger_note.sql); absent otherwise. */
  note?: string;
  details_endpoint: string;
  executions: ExecutionView[];
}

interface TriggerRow {
  id: string;
  team_id: string;
  flow_type: string;
  trigger_type: string;
  status: SendStatus;
  total_contacts: number;
  sent: number;
  failed: number;
  filtered: number;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  scheduled_for: Date | null;
  note: string | null;
}

type ExecutionRow = ExecutionView & { team_id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const isFinal = (s: SendStatus) => s === "completed" || s === "failed";
const date = (ms: number | null) => (ms === null ? null : new Date(ms));

function countsOf(v: ExecutionView): Counts {
  return { total_contacts: v.total_contacts, sent: v.sent_count, failed: v.failed_count, filtered: v.filtered_count };
}

function withCounts(
  v: Omit<ExecutionView, "total_contacts" | "sent_count" | "failed_count" | "filtered_count">,
  c: Counts,
) {
  return {
    ...v,
    total_contacts: c.total_contacts,
    sent_count: c.sent,
    failed_count: c.failed,
    filtered_count: c.filtered,
  };
}

/** The path of a trigger's detail view. */
export function detailsEndpoint(triggerId: string, flowType: string): string {
  return flowType === "workflow" ? `/api/v1/triggers/${triggerId}/workflow` : `/api/v1/triggers/${triggerId}/direct`;
}

/** 404 for a trigger asked for the details view of the other kind: the answer names the view it has. */
export function notOfKind(asked: "direct" | "workflow"): NotFoundError {
  const other = asked === "direct" ? "workflow" : "direct";
  return new NotFoundError(
    `Trigger is not a ${asked} trigger: see GET /api/v1/triggers/{trigger_id}/${other}`,
    `not_a_${asked}_trigger`,
  );
}

/** The path of an execution's per-recipient list. */
export function jobsEndpoint(channel: Channel, executionId: string): string {
  const base = channel === "email" ? "messages" : channel;
  return `/api/v1/${base}/executions/${executionId}/jobs`;
}

/**
 * A team's trigger: from the engine's state of the send while it runs (deps.sendState: a fan-out
 * with its running counts), else from Postgres, else from the record written when it was accepted
 * (the worker has not taken it up yet). Undefined when the team has no such trigger.
 */
export async function findTrigger(deps: Deps, teamId: string, given: string): Promise<TriggerView | undefined> {
  if (!UUID.test(given)) return undefined;
  // Hot-state keys are exact where Postgres compares UUIDs without regard to case.
  const id = given.toLowerCase();
  const state = await deps.sendState.trigger(id);
  if (state && !state.pending) return state.record.team_id === teamId ? fromState(state) : undefined;
  const [row]: [TriggerRow?] = await deps.sql`
    select id, team_id, flow_type, trigger_type, status, total_contacts, sent, failed, filtered, created_at,
      started_at, completed_at, scheduled_for, note
    from triggers where id = ${id}`;
  if (!row) return state?.record.team_id === teamId ? fromState(state) : undefined;
  if (row.team_id !== teamId) return undefined;
  const executions = await withLiveCounts(deps, await executionsOf(deps.sql, [id]));
  const summary = isFinal(row.status)
    ? { total_contacts: row.total_contacts, sent: row.sent, failed: row.failed, filtered: row.filtered }
    : row.flow_type === "workflow"
    // A running workflow has no execution rows of the pipeline: its steps' messages so far.
    ? (await stepCounts(deps.sql, [id])).get(id)!
    : addCounts(executions.map(countsOf));
  const view: TriggerView = {
    id: row.id,
    flow_type: row.flow_type,
    trigger_type: row.trigger_type,
    status: row.status,
    created_at: row.created_at,
    started_at: row.started_at,
    completed_at: row.completed_at,
    scheduled_for: row.scheduled_for,
    summary,
    ...(row.note === null ? {} : { note: row.note }),
    details_endpoint: detailsEndpoint(row.id, row.flow_type),
    executions,
  };
  return isFinal(view.status) ? view : withUndelivered(view, await deps.sendState.givenUp(view.id));
}

/**
 * A job of the trigger the queue gave up on: it cannot complete, so it shows as failed, and so do
 * its executions that had not finished.
 */
function withUndelivered(view: TriggerView, givenUp: boolean): TriggerView {
  if (!givenUp) return view;
  return { ...view, status: "failed", executions: view.executions.map(failedUnlessFinal) };
}

function failedUnlessFinal(e: ExecutionView): ExecutionView {
  return isFinal(e.status) ? e : { ...e, status: "failed" };
}

function fromState({ record, counts: live, givenUp }: TriggerState): TriggerView {
  const executions: ExecutionView[] = record.executions.map((e) =>
    withCounts({
      id: e.id,
      trigger_id: record.id,
      channel: e.channel,
      status: e.counts ? e.status : record.status === "pending" ? "pending" : "processing",
      created_at: new Date(record.created_at),
      completed_at: date(e.completed_at),
    }, e.counts ?? live.get(e.id) ?? zeroCounts())
  );
  const view: TriggerView = {
    id: record.id,
    flow_type: record.flow_type,
    trigger_type: record.trigger_type,
    status: record.status,
    created_at: new Date(record.created_at),
    started_at: date(record.started_at),
    completed_at: date(record.completed_at),
    scheduled_for: date(record.scheduled_for),
    summary: addCounts(executions.map(countsOf)),
    details_endpoint: detailsEndpoint(record.id, record.flow_type),
    executions,
  };
  return isFinal(view.status) ? view : withUndelivered(view, givenUp);
}

async function executionsOf(db: Db, triggerIds: string[]): Promise<ExecutionView[]> {
  const rows = await db<ExecutionRow[]>`
    select id, trigger_id, team_id, channel, status, total_contacts, sent_count, failed_count, filtered_count,
      created_at, completed_at
    from executions where trigger_id = any(${triggerIds}::uuid[]) order by created_at, channel`;
  return rows.map(viewOf);
}

function viewOf(r: ExecutionRow): ExecutionView {
  return {
    id: r.id,
    trigger_id: r.trigger_id,
    channel: r.channel,
    status: r.status,
    total_contacts: r.total_contacts,
    sent_count: r.sent_count,
    failed_count: r.failed_count,
    filtered_count: r.filtered_count,
    created_at: r.created_at,
    completed_at: r.completed_at,
  };
}

/** Running executions get their counts from the engine's running counts. */
async function withLiveCounts(deps: Deps, views: ExecutionView[]): Promise<ExecutionView[]> {
  const running = [...new Set(views.filter((v) => !isFinal(v.status)).map((v) => v.trigger_id))];
  if (running.length === 0) return views;
  const live = new Map<string, Counts>();
  for (const triggerId of running) {
    for (const [id, c] of await deps.sendState.counts(triggerId)) live.set(id, c);
  }
  return views.map((v) => (isFinal(v.status) || !live.has(v.id) ? v : withCounts(v, live.get(v.id)!)));
}

/**
 * An execution of the team on `channel` (any channel when undefined), named by its id or by its
 * trigger's id (then the trigger's execution on that channel, or its only one).
 */
export async function findExecution(
  deps: Deps,
  teamId: string,
  given: string,
  channel?: Channel,
): Promise<ExecutionView | undefined> {
  if (!UUID.test(given)) return undefined;
  const id = given.toLowerCase();
  const [byId]: [ExecutionRow?] = await deps.sql`
    select id, trigger_id, team_id, channel, status, total_contacts, sent_count, failed_count, filtered_count,
      created_at, completed_at
    from executions where id = ${id} and team_id = ${teamId}`;
  if (byId && (!channel || byId.channel === channel)) {
    const [view] = await withLiveCounts(deps, [viewOf(byId)]);
    return isFinal(view.status) || !await deps.sendState.givenUp(view.trigger_id) ? view : failedUnlessFinal(view);
  }
  const trigger = await findTrigger(deps, teamId, id);
  if (!trigger) {
    return await unrecordedExecution(deps, teamId, id, channel) ?? await stepExecution(deps, teamId, id, channel);
  }
  const wanted = channel ?? "email";
  return trigger.executions.find((e) => e.channel === wanted) ??
    (trigger.executions.length === 1 && !channel ? trigger.executions[0] : undefined);
}

/**
 * An execution whose trigger is not in Postgres: an OTP sandbox send's (its trigger lives only in the
 * engine's hot state) or a send the worker has not recorded yet. Shown as its trigger shows it now.
 */
async function unrecordedExecution(
  deps: Deps,
  teamId: string,
  id: string,
  channel?: Channel,
): Promise<ExecutionView | undefined> {
  const triggerId = await deps.sendState.triggerOfExecution(id);
  if (triggerId === null) return undefined;
  const execution = (await findTrigger(deps, teamId, triggerId))?.executions.find((e) => e.id === id);
  return execution && (!channel || execution.channel === channel) ? execution : undefined;
}

/**
 * The messages of one workflow step for one start, under the execution id their records and webhooks
 * carry (derived from the start and the step, not recorded as an execution): read from the messages,
 * final once the workflow's trigger is.
 */
async function stepExecution(
  deps: Deps,
  teamId: string,
  id: string,
  channel?: Channel,
): Promise<ExecutionView | undefined> {
  const rows = await deps.sql<
    {
      trigger_id: string;
      channel: Channel;
      status: MessageStatus;
      n: number;
      first: Date;
      last: Date;
    }[]
  >`
    select trigger_id, channel, status, count(*)::int as n, min(created_at) as first,
      max(coalesce(sent_at, created_at)) as last
    from messages where execution_id = ${id} and team_id = ${teamId}
    group by trigger_id, channel, status`;
  if (rows.length === 0 || (channel && rows[0].channel !== channel)) return undefined;
  const counts = countStatuses(rows.map((r) => [id, r.status, r.n] as const)).get(id)!;
  const trigger = await findTrigger(deps, teamId, rows[0].trigger_id);
  const done = !rows.some((r) => r.status === "pending") && trigger !== undefined && isFinal(trigger.status);
  return withCounts({
    id,
    trigger_id: rows[0].trigger_id,
    channel: rows[0].channel,
    status: done ? finalStatus(counts) : "processing",
    created_at: new Date(Math.min(...rows.map((r) => r.first.getTime()))),
    completed_at: done ? new Date(Math.max(...rows.map((r) => r.last.getTime()))) : null,
  }, counts);
}

/** A page of the team's executions on a channel, newest first; the list is also `data` (what SDKs iterate). */
export async function listExecutions(deps: Deps, teamId: string, channel: Channel, page: number, limit: number) {
  const rows = await deps.sql<ExecutionRow[]>`
    select id, trigger_id, team_id, channel, status, total_contacts, sent_count, failed_count, filtered_count,
      created_at, completed_at
    from executions where team_id = ${teamId} and channel = ${channel}
    order by created_at desc, id desc limit ${limit} offset ${(page - 1) * limit}`;
  const [{ total }]: [{ total: number }] = await deps.sql`
    select count(*)::int as total from executions where team_id = ${teamId} and channel = ${channel}`;
  const executions = await withLiveCounts(deps, rows.map(viewOf));
  return {
    executions,
    data: executions,
    total,
    page,
    limit,
    totalPages: Math.ceil(total / limit),
  };
}

/** One recipient's message as the jobs list shows it. */
export interface JobView {
  id: string;
  recipient: string | null;
  contact_id: string | null;
  status: string;
  provider_message_id: string | null;
  error: string | null;
  cost: number;
  created_at: Date;
  sent_at: Date | null;
  /** Template variables that had no value and rendered empty. */
  missing_variables: string[];
  /** Why the message is not what it seems (kept in the outbox for want of a provider …), else null. */
  note: string | null;
  /** When a message held by quiet hours goes (or went); null for one never held. */
  scheduled_for: Date | null;
  /** Its hand-overs to the team's channel accounts (failover), null when it went the default way. */
  attempts: Attempt[] | null;
}

/** A page of an execution's per-recipient messages. */
export async function listJobs(deps: Deps, execution: ExecutionView, page: number, limit: number) {
  const rows = await deps.sql<
    (Omit<JobView, "cost" | "recipient" | "missing_variables" | "scheduled_for"> & {
      to_address: string | null;
      cost_micros: number;
      missing_variables: string | null;
      held_until: Date | null;
    })[]
  >`
    select id, to_address, contact_id, status, provider_message_id, error, cost_micros, created_at, sent_at,
      missing_variables, note, held_until, attempts
    from messages where execution_id = ${execution.id}
    order by recipient limit ${limit} offset ${(page - 1) * limit}`;
  const [{ total }]: [{ total: number }] = await deps.sql`
    select count(*)::int as total from messages where execution_id = ${execution.id}`;
  const now = deps.now();
  const jobs: JobView[] = rows.map((r) => ({
    id: r.id,
    recipient: r.to_address,
    contact_id: r.contact_id,
    // Held by quiet hours: scheduled until its time comes (then pending until a worker sends it).
    status: r.status === "pending" && r.held_until && r.held_until.getTime() > now ? "scheduled" : r.status,
    provider_message_id: r.provider_message_id,
    error: r.error,
    cost: toUsd(r.cost_micros),
    created_at: r.created_at,
    sent_at: r.sent_at,
    missing_variables: r.missing_variables?.split(",") ?? [],
    note: r.note,
    scheduled_for: r.held_until,
    attempts: r.attempts,
  }));
  return {
    execution_id: execution.id,
    channel: execution.channel,
    jobs,
    total,
    page,
    limit,
    totalPages: Math.ceil(total / limit),
  };
}

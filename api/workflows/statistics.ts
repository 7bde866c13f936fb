import type { Db } from "../../shared/db.ts";
import { toUsd } from "../../shared/money.ts";
import { iso, type Workflow } from "./queries.ts";

interface ExecutionTotals {
  total: number;
  processed: number;
  failed: number;
  started: number;
  contacts: number;
  started_at: Date | null;
  completed_at: Date | null;
  scheduled_at: Date | null;
}

interface ChannelRow {
  channel_type: "email" | "sms" | "whatsapp";
  execution_count: number;
  total_contacts: number;
  sent: number;
  failed: number;
  delivered: number;
  read: number;
  cost_micros: number;
}

/** A share in percent with two decimals (0 when there is nothing to share). */
function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;
}

async function executionTotals(db: Db, workflowId: string): Promise<ExecutionTotals> {
  const [row]: [ExecutionTotals] = await db`
    select
      count(*)::int as total,
      count(*) filter (where status in ('COMPLETED', 'FAILED'))::int as processed,
      count(*) filter (where status = 'FAILED')::int as failed,
      count(*) filter (where started_at is not null)::int as started,
      (count(distinct contact_id) + count(*) filter (where contact_id is null))::int as contacts,
      min(started_at) as started_at,
      max(completed_at) as completed_at,
      min(next_run_at) filter (where current_step is not null) as scheduled_at
    from workflow_executions where workflow_id = ${workflowId}`;
  return row;
}

/** Per channel, what the steps did; WhatsApp delivered/read come from the provider's reports on the messages. */
async function channelRows(db: Db, workflowId: string): Promise<ChannelRow[]> {
  return await db<ChannelRow[]>`
    select
      r.channel_type,
      count(distinct r.execution_id)::int as execution_count,
      count(distinct r.contact_id)::int as total_contacts,
      count(*) filter (where r.status = 'SENT')::int as sent,
      count(*) filter (where r.status = 'FAILED')::int as failed,
      count(m.delivered_at)::int as delivered,
      count(m.read_at)::int as read,
      coalesce(sum(r.cost_micros), 0)::bigint as cost_micros
    from workflow_step_runs r
    left join messages m on r.channel_type = 'whatsapp' and m.id = r.message_id
    where r.workflow_id = ${workflowId}
    group by r.channel_type`;
}

async function lastSource(db: Db, workflowId: string): Promise<string | undefined> {
  const [row]: [{ source: string }?] = await db`
    select source from workflow_executions where workflow_id = ${workflowId}
    order by created_at desc, id desc limit 1`;
  return row?.source;
}

function status(t: ExecutionTotals): "PENDING" | "PROCESSING" | "COMPLETED" | "FAILED" {
  if (t.total === 0) return "PENDING";
  if (t.processed === t.total) return t.failed === t.total ? "FAILED" : "COMPLETED";
  return t.started > 0 ? "PROCESSING" : "PENDING";
}

function channelStats(row: ChannelRow) {
  const base = {
    execution_count: row.execution_count,
    total_contacts: row.total_contacts,
    sent: row.sent,
    failed: row.failed,
  };
  if (row.channel_type === "email") return { ...base, success_rate: percent(row.sent, row.sent + row.failed) };
  if (row.channel_type === "sms") {
    return { ...base, success_rate: percent(row.sent, row.sent + row.failed), estimated_cost: toUsd(row.cost_micros) };
  }
  return {
    execution_count: row.execution_count,
    total_contacts: row.total_contacts,
    sent: row.sent,
    delivered: row.delivered,
    read: row.read,
    failed: row.failed,
    delivery_rate: percent(row.delivered, row.sent),
    read_rate: percent(row.read, row.delivered),
    estimated_cost: toUsd(row.cost_micros),
  };
}

function emptyRow(channel: ChannelRow["channel_type"]): ChannelRow {
  return {
    channel_type: channel,
    execution_count: 0,
    total_contacts: 0,
    sent: 0,
    failed: 0,
    delivered: 0,
    read: 0,
    cost_micros: 0,
  };
}

/**
 * The statistics view of a workflow, aggregated in SQL over its executions and step runs (a few
 * indexed aggregate queries, whatever the number of executions).
 */
export async function workflowStatistics(db: Db, workflow: Workflow, now: number) {
  const [totals, rows, source] = await Promise.all([
    executionTotals(db, workflow.id),
    channelRows(db, workflow.id),
    lastSource(db, workflow.id),
  ]);
  const byChannel = new Map(rows.map((r) => [r.channel_type, r]));
  for (const step of workflow.steps) {
    if (!byChannel.has(step.channel_type)) byChannel.set(step.channel_type, emptyRow(step.channel_type));
  }
  const channels: Record<string, ReturnType<typeof channelStats>> = {};
  for (const channel of ["email", "sms", "whatsapp"] as const) {
    const row = byChannel.get(channel);
    if (row) channels[channel] = channelStats(row);
  }
  const sent = rows.reduce((n, r) => n + r.sent, 0);
  const failed = rows.reduce((n, r) => n + r.failed, 0);
  const cost = rows.reduce((n, r) => n + r.cost_micros, 0);
  const state = status(totals);
  const finished = state === "COMPLETED" || state === "FAILED";
  const end = finished && totals.completed_at ? totals.completed_at.getTime() : now;
  const duration = totals.started_at ? Math.max(0, end - totals.started_at.getTime()) / 1000 : 0;
  return {
    campaign_name: workflow.name,
    trigger_type: source ?? "event",
    trigger_source: source === "api" ? "api" : workflow.event_type,
    status: state,
    started_at: iso(totals.started_at),
    completed_at: finished ? iso(totals.completed_at) : null,
    scheduled_at: iso(totals.scheduled_at),
    duration_seconds: duration,
    workflow_executions_count: totals.total,
    channels,
    totals: {
      total_contacts: totals.contacts,
      total_sent: sent,
      total_failed: failed,
      overall_success_rate: percent(sent, sent + failed),
      total_cost: toUsd(cost),
      currency: "USD",
    },
    progress: { processed: totals.processed, total: totals.total, percentage: percent(totals.processed, totals.total) },
  };
}

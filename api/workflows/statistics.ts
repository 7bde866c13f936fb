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

const NO_TIMES = { started_at: null, completed_at: null, scheduled_at: null };

/** What the executions did, from the running totals (shared/migrations/029_workflow_stats.sql). */
async function executionTotals(db: Db, workflowId: string): Promise<ExecutionTotals> {
  const [row]: [ExecutionTotals?] = await db`
    select
      s.executions::int as total, s.processed::int as processed, s.failed::int as failed,
      s.started::int as started, s.contacts::int as contacts,
      s.first_started_at as started_at, s.last_completed_at as completed_at,
      (select min(due_at) from workflow_due d where d.workflow_id = s.workflow_id) as scheduled_at
    from workflow_stats s where s.workflow_id = ${workflowId}`;
  return row ?? { total: 0, processed: 0, failed: 0, started: 0, contacts: 0, ...NO_TIMES };
}

/** Per channel, what the steps did (WhatsApp delivered/read from the provider's reports on the messages). */
async function channelRows(db: Db, workflowId: string): Promise<ChannelRow[]> {
  return await db<ChannelRow[]>`
    select channel_type, executions::int as execution_count, contacts::int as total_contacts, sent::int as sent,
      failed::int as failed, delivered::int as delivered, read::int as read, cost_micros
    from workflow_channel_stats where workflow_id = ${workflowId}`;
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
 * The statistics view of a workflow, from the running totals its executions and step runs keep
 * (a few rows read, whatever the number of executions).
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

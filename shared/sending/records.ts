import type postgres from "postgres";
import { asJson, type Db } from "../db.ts";
import { addCounts, type Counts, type SendStatus, type TriggerRecord, zeroCounts } from "./trigger_record.ts";
import { type SendSpec, SendSpecSchema } from "./spec.ts";

/**
 * Records sends as triggers with their executions (one statement each, whatever the number of
 * sends). A trigger already recorded is left as it is, so recording twice is harmless.
 */
export async function insertTriggers(db: Db, specs: SendSpec[], status: "pending" | "processing", now: number) {
  if (specs.length === 0) return;
  const started = status === "processing" ? new Date(now) : null;
  const triggers = specs.map((s) => ({
    id: s.trigger_id,
    team_id: s.team_id,
    flow_type: "direct_channel",
    trigger_type: s.trigger_type,
    status,
    recipient_type: s.recipient_type,
    channels: s.executions.map((e) => e.content.channel),
    job_id: s.job_id,
    spec: asJson(s),
    sandbox: s.sandbox,
    scheduled_for: s.scheduled_for === null ? null : new Date(s.scheduled_for),
    created_at: new Date(s.created_at),
    started_at: started,
  }));
  const executions = specs.flatMap((s) =>
    s.executions.map((e) => ({
      id: e.id,
      trigger_id: s.trigger_id,
      team_id: s.team_id,
      channel: e.content.channel,
      status,
      created_at: new Date(s.created_at),
      started_at: started,
    }))
  );
  await db`insert into triggers ${db(triggers)} on conflict (id) do nothing`;
  await db`insert into executions ${db(executions)} on conflict (id) do nothing`;
}

/** Moves triggers (and their executions) that have not started yet to processing. */
export async function markProcessing(db: Db, triggerIds: string[], now: number): Promise<void> {
  if (triggerIds.length === 0) return;
  const at = new Date(now);
  await db`update triggers set status = 'processing', started_at = coalesce(started_at, ${at})
    where id = any(${triggerIds}::uuid[]) and status = 'pending'`;
  await db`update executions set status = 'processing', started_at = coalesce(started_at, ${at})
    where trigger_id = any(${triggerIds}::uuid[]) and status = 'pending'`;
}

/** A finished execution or trigger: final status and counts. */
export interface Finished {
  id: string;
  status: SendStatus;
  counts: Counts;
  completed_at: number;
}

/** Writes the final status and counts of executions (one statement). */
export async function finishExecutionRows(db: Db, rows: Finished[]): Promise<void> {
  if (rows.length === 0) return;
  const c = columns(rows);
  await db`
    update executions e set status = v.status, total_contacts = v.total, sent_count = v.sent,
      failed_count = v.failed, filtered_count = v.filtered, completed_at = v.completed_at,
      started_at = coalesce(e.started_at, v.completed_at)
    from unnest(${c.ids}::uuid[], ${c.statuses}::text[], ${c.total}::int[], ${c.sent}::int[], ${c.failed}::int[],
      ${c.filtered}::int[], ${c.at}::timestamptz[]) as v(id, status, total, sent, failed, filtered, completed_at)
    where e.id = v.id and e.status not in ('completed', 'failed')`;
}

/** Writes the final status and counts of triggers (one statement). */
export async function finishTriggerRows(db: Db, rows: Finished[]): Promise<void> {
  if (rows.length === 0) return;
  const c = columns(rows);
  await db`
    update triggers t set status = v.status, total_contacts = v.total, sent = v.sent, failed = v.failed,
      filtered = v.filtered, completed_at = v.completed_at, started_at = coalesce(t.started_at, v.completed_at)
    from unnest(${c.ids}::uuid[], ${c.statuses}::text[], ${c.total}::int[], ${c.sent}::int[], ${c.failed}::int[],
      ${c.filtered}::int[], ${c.at}::timestamptz[]) as v(id, status, total, sent, failed, filtered, completed_at)
    where t.id = v.id and t.status not in ('completed', 'failed')`;
}

function columns(rows: Finished[]) {
  return {
    ids: rows.map((r) => r.id),
    statuses: rows.map((r) => r.status),
    total: rows.map((r) => r.counts.total_contacts),
    sent: rows.map((r) => r.counts.sent),
    failed: rows.map((r) => r.counts.failed),
    filtered: rows.map((r) => r.counts.filtered),
    at: rows.map((r) => new Date(r.completed_at).toISOString()),
  };
}

/** The send recorded under a trigger id (what the worker delivers from). */
export async function loadSpec(db: Db, triggerId: string): Promise<SendSpec | undefined> {
  const [row]: [{ spec: unknown }?] = await db`select spec from triggers where id = ${triggerId}`;
  if (!row?.spec) return undefined;
  return SendSpecSchema.parse(row.spec);
}

/**
 * Records sends that are already finished (single-recipient sends, recorded once delivered): each
 * trigger and its executions with final status and counts, two statements for the lot (over
 * column arrays: far cheaper to build than a placeholder per value). A row recorded earlier (a
 * scheduled send) is brought to the final state; a final one is left alone. One transaction: a
 * reader that sees a trigger completed also sees its executions (GET /sms/executions right after
 * GET /triggers/{id} said completed).
 */
export async function recordFinished(sql: postgres.Sql, specs: SendSpec[], records: TriggerRecord[]): Promise<void> {
  if (specs.length === 0) return;
  await sql.begin((tx) => recordFinishedIn(tx, specs, records));
}

/**
 * {@linkcode recordFinished} within the caller's transaction; answers the triggers it made final
 * (left out: those an earlier call recorded final already).
 */
export async function recordFinishedIn(db: Db, specs: SendSpec[], records: TriggerRecord[]): Promise<Set<string>> {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const totals = records.map((r) => addCounts(r.executions.map((e) => e.counts ?? zeroCounts())));
  const t = <T>(f: (s: SendSpec, i: number) => T) => specs.map(f);
  const final = await db<{ id: string }[]>`
    insert into triggers (id, team_id, flow_type, trigger_type, status, recipient_type, channels, job_id, sandbox,
      total_contacts, sent, failed, filtered, scheduled_for, created_at, started_at, completed_at)
    select id, team_id, 'direct_channel', trigger_type, status, recipient_type, string_to_array(channels, ','), job_id,
      sandbox::boolean, total, sent, failed, filtered, scheduled_for, created_at, started_at, completed_at
    from unnest(${t((s) => s.trigger_id)}::uuid[], ${t((s) => s.team_id)}::uuid[], ${t((s) => s.trigger_type)}::text[],
      ${t((_, i) => records[i].status)}::text[], ${t((s) => s.recipient_type)}::text[],
      ${t((s) => s.executions.map((e) => e.content.channel).join(","))}::text[], ${t((s) => s.job_id)}::text[],
      ${t((s) => (s.sandbox ? "t" : "f"))}::text[], ${totals.map((c) => c.total_contacts)}::int[], ${
    totals.map((c) => c.sent)
  }::int[],
      ${totals.map((c) => c.failed)}::int[], ${totals.map((c) => c.filtered)}::int[],
      ${t((s) => iso(s.scheduled_for))}::timestamptz[], ${t((s) => iso(s.created_at))}::timestamptz[],
      ${t((_, i) => iso(records[i].started_at))}::timestamptz[], ${
    t((_, i) => iso(records[i].completed_at))
  }::timestamptz[])
      as v(id, team_id, trigger_type, status, recipient_type, channels, job_id, sandbox, total, sent, failed, filtered,
        scheduled_for, created_at, started_at, completed_at)
    on conflict (id) do update set status = excluded.status, total_contacts = excluded.total_contacts,
      sent = excluded.sent, failed = excluded.failed, filtered = excluded.filtered,
      started_at = coalesce(triggers.started_at, excluded.started_at), completed_at = excluded.completed_at
    where triggers.status not in ('completed', 'failed')
    returning id`;
  const executions = specs.flatMap((s, i) => records[i].executions.map((e) => ({ s, r: records[i], e })));
  const x = <T>(f: (v: (typeof executions)[number]) => T) => executions.map(f);
  await db`
    insert into executions (id, trigger_id, team_id, channel, status, total_contacts, sent_count, failed_count,
      filtered_count, created_at, started_at, completed_at)
    select * from unnest(${x((v) => v.e.id)}::uuid[], ${x((v) => v.s.trigger_id)}::uuid[], ${
    x((v) => v.s.team_id)
  }::uuid[],
      ${x((v) => v.e.channel)}::text[], ${x((v) => v.e.status)}::text[], ${
    x((v) => v.e.counts?.total_contacts ?? 0)
  }::int[],
      ${x((v) => v.e.counts?.sent ?? 0)}::int[], ${x((v) => v.e.counts?.failed ?? 0)}::int[],
      ${x((v) => v.e.counts?.filtered ?? 0)}::int[], ${x((v) => iso(v.s.created_at))}::timestamptz[],
      ${x((v) => iso(v.r.started_at))}::timestamptz[], ${x((v) => iso(v.e.completed_at))}::timestamptz[])
    on conflict (id) do update set status = excluded.status, total_contacts = excluded.total_contacts,
      sent_count = excluded.sent_count, failed_count = excluded.failed_count,
      filtered_count = excluded.filtered_count, started_at = coalesce(executions.started_at, excluded.started_at),
      completed_at = excluded.completed_at
    where executions.status not in ('completed', 'failed')`;
  return new Set(final.map((r) => r.id));
}

import type { Db } from "../db.ts";
import type { Deps } from "../deps.ts";
import { changeAndReport } from "../event_outbox.ts";
import type { Counts } from "../sending/trigger_record.ts";
import { type CompletedTrigger, triggerCompletedEvent } from "../webhook_events.ts";

/**
 * The triggers among `ids` not final yet whose executions are all finished and whose fan-outs are
 * over (a final one is left out before its steps are counted: a redelivered job asks again).
 */
async function finishedTriggers(db: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db<{ id: string }[]>`
    select t.id from unnest(${ids}::uuid[]) as t(id)
    where exists (select 1 from triggers x where x.id = t.id and x.status not in ('completed', 'failed'))
      and not exists (select 1 from workflow_executions e where e.trigger_id = t.id and e.current_step is not null)
      and not exists (select 1 from workflow_runs r where r.trigger_id = t.id and not r.fanout_done)`;
  return rows.map((r) => r.id);
}

/** A workflow trigger that became final, as `trigger.completed` reports it. */
type Completed = CompletedTrigger & { team_id: string };

/**
 * What workflow triggers have delivered so far: `sent`, `failed` and `filtered` count their steps'
 * messages and `total_contacts` all of them, as a direct send to several channels counts one
 * recipient a channel, so that `total_contacts = sent + failed + filtered` holds for every trigger
 * (the workflow's statistics view counts contacts). Every id of `ids` is in the answer.
 */
export async function stepCounts(db: Db, ids: string[]): Promise<Map<string, Counts>> {
  const rows = await db<(Counts & { id: string })[]>`
    select t.id,
      count(r.execution_id)::int as total_contacts,
      count(r.execution_id) filter (where r.status = 'SENT')::int as sent,
      count(r.execution_id) filter (where r.status = 'FAILED')::int as failed,
      count(r.execution_id) filter (where r.status = 'FILTERED')::int as filtered
    from unnest(${ids}::uuid[]) as t(id)
    left join workflow_executions e on e.trigger_id = t.id
    left join workflow_step_runs r on r.execution_id = e.id
    group by t.id`;
  return new Map(rows.map(({ id, ...counts }) => [id, counts]));
}

/**
 * Writes the final counts (see stepCounts) and status of finished workflow triggers: failed when
 * nothing was sent and something failed. Answers the triggers that became final now.
 */
async function finish(db: Db, ids: string[], now: number, notes: Map<string, string>): Promise<Completed[]> {
  const counts = [...await stepCounts(db, ids)];
  const of = (field: keyof Counts) => counts.map(([, c]) => c[field]);
  const counted = counts.map(([id]) => id);
  // A note says why a trigger reached no one: kept only when it indeed delivered nothing.
  const noteOf = counts.map(([id, c]) => c.total_contacts === 0 ? notes.get(id) ?? null : null);
  return await db<Completed[]>`
    with c as (
      select * from unnest(${counted}::uuid[], ${of("total_contacts")}::int[], ${of("sent")}::int[],
        ${of("failed")}::int[], ${of("filtered")}::int[], ${noteOf}::text[])
        as v(id, total, sent, failed, filtered, note)
    )
    update triggers t set
      status = case when c.sent = 0 and c.failed > 0 then 'failed' else 'completed' end,
      total_contacts = c.total, sent = c.sent, failed = c.failed, filtered = c.filtered, note = c.note,
      completed_at = ${new Date(now)}, started_at = coalesce(t.started_at, ${new Date(now)})
    from c
    where t.id = c.id and t.status not in ('completed', 'failed')
    returning t.id, t.team_id, t.flow_type, t.trigger_type, t.status, t.total_contacts, t.sent, t.failed, t.filtered,
      t.completed_at`;
}

/**
 * Completes the workflow triggers among `ids` whose executions are all finished (and fan-outs over),
 * and emits `trigger.completed` for them. Safe to call any number of times (the worker calls it as
 * executions finish; deleting a workflow too, for the triggers whose executions went with it).
 * `notes`: why some of them reached no one, kept on those that indeed delivered nothing.
 */
export async function completeTriggers(
  deps: Deps,
  ids: string[],
  notes: Map<string, string> = new Map(),
): Promise<void> {
  const done = await finishedTriggers(deps.sql, [...new Set(ids)]);
  if (done.length === 0) return;
  // Only the call that makes a trigger final stages its event, in the same transaction.
  await changeAndReport(
    deps,
    (tx) => finish(tx, done, deps.now(), notes),
    (completed) => completed.map((t) => ({ team_id: t.team_id, ...triggerCompletedEvent(t) })),
  );
}

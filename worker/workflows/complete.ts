import type { Deps } from "../../shared/deps.ts";
import { triggerTypesOf, type WorkflowStart } from "../../shared/workflows/start.ts";
import type { WorkerContext } from "../context.ts";

/**
 * Records workflow starts as triggers in Postgres (flow_type 'workflow'), processing from now, in
 * one statement (a stored start, recorded pending when accepted, is moved to processing); recording
 * one twice is harmless. From now on Postgres answers for them: the pending record a stored start
 * kept under its trigger's id is emptied (the pending pages of the others expire on their own).
 */
export async function recordTriggers(
  w: WorkerContext,
  starts: { start: WorkflowStart; channels: string[] }[],
  options: { stored?: boolean } = {},
): Promise<void> {
  if (starts.length === 0) return;
  const { deps } = w;
  const now = new Date(deps.now());
  const rows = starts.map(({ start, channels }) => ({
    id: start.trigger_id,
    team_id: start.team_id,
    ...triggerTypesOf(start),
    status: "processing",
    channels,
    job_id: start.job_id,
    sandbox: start.sandbox,
    scheduled_for: start.scheduled_for === null ? null : new Date(start.scheduled_for),
    created_at: new Date(start.created_at),
    started_at: now,
  }));
  const ids = rows.map((r) => r.id);
  await deps.sql`insert into triggers ${deps.sql(rows)} on conflict (id) do nothing`;
  if (options.stored) {
    // Recorded (pending) when accepted: it starts now.
    await deps.sql`update triggers set status = 'processing', started_at = coalesce(started_at, ${now})
      where id = any(${ids}::uuid[]) and status = 'pending'`;
  }
  if (options.stored) await Promise.all(ids.map((id) => dropPendingRecord(deps, id)));
}

/** How long the emptied record of a stored start is kept (readers take an empty record for none). */
const DROPPED_KEEP_MS = 3_600_000;

/**
 * Empties the pending record a stored start kept (see api/workflows/acceptor.ts) so that readers of
 * the trigger go to Postgres: written empty with the version read, as records change only by
 * compare-and-set; read again if another write came first.
 */
async function dropPendingRecord(deps: Deps, triggerId: string): Promise<void> {
  const records = deps.records("send_triggers");
  for (let attempt = 0; attempt < 5; attempt++) {
    const record = await records.get<unknown>("", triggerId);
    if (!record?.value) return;
    const emptied = { expected: record.version, ttlMs: DROPPED_KEEP_MS, activeUntil: null };
    if (await records.put("", triggerId, null, emptied)) return;
  }
}

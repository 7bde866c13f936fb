import { sendKeys } from "../../shared/sending/keys.ts";
import { triggerTypesOf, type WorkflowStart } from "../../shared/workflows/start.ts";
import type { WorkerContext } from "../context.ts";

/**
 * Records workflow starts as triggers in Postgres (flow_type 'workflow'), processing from now, in
 * one statement (a stored start, recorded pending when accepted, is moved to processing); recording
 * one twice is harmless. From now on Postgres answers for them: the KV record a stored start kept
 * under its trigger's key is dropped (the pending pages of the others expire on their own).
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
  for (let i = 0; i < ids.length; i += 500) {
    const op = deps.kv.atomic();
    for (const id of ids.slice(i, i + 500)) op.delete(sendKeys.trigger(id));
    await op.commit();
  }
}

import { sendKeys } from "../../shared/sending/keys.ts";
import type { WorkflowStart } from "../../shared/workflows/start.ts";
import type { WorkerContext } from "../context.ts";

/**
 * Records workflow starts as triggers in Postgres (flow_type 'workflow'), processing from now, in
 * one statement (a stored start, recorded pending when accepted, is moved to processing); recording
 * one twice is harmless. Their KV records (written on accept, so that a
 * trigger could be read at once) are dropped: from now on Postgres answers for them.
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
    flow_type: "workflow",
    trigger_type: start.source === "event" ? "event" : "workflow",
    status: "processing",
    recipient_type: start.source === "event" ? "event" : start.recipient?.type ?? null,
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

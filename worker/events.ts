import type { Deps } from "../shared/deps.ts";
import { log } from "../shared/log.ts";
import type { TriggerRecord } from "../shared/sending/trigger_record.ts";
import { addCounts, zeroCounts } from "../shared/sending/trigger_record.ts";
import { emitEvents, type EventInput } from "../shared/webhook_events.ts";

/** A message whose outcome a delivery pass decided. */
export interface MessageOutcome {
  team_id: string;
  message_id: string;
  trigger_id: string;
  execution_id: string;
  channel: string;
  to: string | null;
  status: "sent" | "failed";
  provider_message_id?: string | null;
  error?: string | null;
}

/** Emits `message.sent` / `message.failed` to the teams' webhooks (one call per team); never throws. */
export async function emitMessageEvents(deps: Deps, outcomes: MessageOutcome[]): Promise<void> {
  const byTeam = new Map<string, EventInput[]>();
  for (const { team_id, status, ...data } of outcomes) {
    const events = byTeam.get(team_id) ?? [];
    events.push({ type: status === "sent" ? "message.sent" : "message.failed", data: { ...data, status } });
    byTeam.set(team_id, events);
  }
  await emitAll(deps, byTeam);
}

/** Emits `trigger.completed` for triggers that just became final; never throws. */
export async function emitTriggersCompleted(deps: Deps, records: TriggerRecord[]): Promise<void> {
  const byTeam = new Map<string, EventInput[]>();
  for (const r of records) {
    const events = byTeam.get(r.team_id) ?? [];
    events.push({
      type: "trigger.completed",
      data: {
        trigger_id: r.id,
        flow_type: r.flow_type,
        trigger_type: r.trigger_type,
        status: r.status,
        summary: addCounts(r.executions.map((e) => e.counts ?? zeroCounts())),
        completed_at: r.completed_at === null ? null : new Date(r.completed_at).toISOString(),
      },
    });
    byTeam.set(r.team_id, events);
  }
  await emitAll(deps, byTeam);
}

async function emitAll(deps: Deps, byTeam: Map<string, EventInput[]>): Promise<void> {
  for (const [teamId, events] of byTeam) {
    try {
      await emitEvents(deps, teamId, events);
    } catch (err) {
      // Webhooks are a notification: a failure to enqueue them never fails a delivery.
      log("error", "cannot emit webhook events", { team_id: teamId, error: String(err) });
    }
  }
}

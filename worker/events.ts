import type { TeamEvent } from "../shared/event_outbox.ts";
import { addCounts, type TriggerRecord, zeroCounts } from "../shared/sending/trigger_record.ts";
import { triggerCompletedEvent } from "../shared/webhook_events.ts";

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

/** The `message.sent` or `message.failed` event of an outcome. */
export function messageEvent({ team_id, status, ...data }: MessageOutcome): TeamEvent {
  return { team_id, type: status === "sent" ? "message.sent" : "message.failed", data: { ...data, status } };
}

/** The `trigger.completed` event of a direct send's trigger that just became final. */
export function triggerRecordCompleted(r: TriggerRecord): TeamEvent {
  return {
    team_id: r.team_id,
    ...triggerCompletedEvent({
      id: r.id,
      flow_type: r.flow_type,
      trigger_type: r.trigger_type,
      status: r.status,
      ...addCounts(r.executions.map((e) => e.counts ?? zeroCounts())),
      completed_at: r.completed_at,
    }),
  };
}

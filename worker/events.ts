import type { TeamEvent } from "../shared/event_outbox.ts";
import { addCounts, type TriggerRecord, zeroCounts } from "../shared/sending/trigger_record.ts";
import { triggerCompletedEvent } from "../shared/webhook_events.ts";
import type { Prepared } from "./prepare.ts";

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

/** The outcome of a prepared message (`id`: its row), as its webhook event reports it. */
export function outcomeOf(
  p: Prepared,
  id: string,
  status: "sent" | "failed",
  extra: { provider_message_id?: string | null; error?: string | null },
): MessageOutcome {
  return {
    team_id: p.team_id,
    message_id: id,
    trigger_id: p.trigger_id,
    execution_id: p.execution_id,
    channel: p.channel,
    to: p.to_address,
    status,
    ...extra,
  };
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

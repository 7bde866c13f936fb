/**
 * Channel fallback in a workflow step: a step naming `fallback_channels` (api/workflows/schemas.ts)
 * sends its template on each of them in turn to the contacts the channel before did not reach, as
 * a send does (worker/fallback.ts): a message that failed (no address, a refusal, retries given up)
 * falls back; a filtered one (a preference off, an unsubscribed contact) never does, nor an
 * execution whose contact is gone. With `fallback_after_minutes`, a WhatsApp message followed by a
 * fallback channel that has no delivered or read report from the provider that long after it was
 * sent falls back too: its execution waits at the step (a step job due then) and is run again.
 * Each channel is its own pipeline execution (stepExecutionId takes the channel), so a contact gets
 * at most one message per channel of a step, however often the step's job runs: a redelivered pass
 * finds the messages recorded and sends none again.
 */
import { reportsReached } from "../../shared/delivery_reports.ts";
import type { StepRow } from "../../shared/workflows/definitions.ts";
import { earliest, latest, type Unfinished } from "../hold.ts";
import type { Claimed, StepRun } from "./queries.ts";

/** What one channel's pass of a step did: final runs, executions waiting, what is left to retry. */
export interface ChannelOutcome {
  runs: ChannelRun[];
  pending: string[];
  retryAfterMs?: number;
  left: Unfinished;
}

/** A step's run on one channel, with what the provider reported of its message. */
export interface ChannelRun extends StepRun {
  /** When a sent message was sent (ms since the epoch). */
  sent_at?: number;
  /** The provider's delivery report: delivered, read, failed, complained; null for none yet. */
  delivery_status?: string | null;
}

/** An execution waiting, until `due`, for its WhatsApp message's delivery report. */
export interface Waiting {
  execution_id: string;
  due: number;
}

const CHANNELS = new Set<string>(["email", "sms", "whatsapp"]);

/** The step as run on each of its channels in order: its own, then its fallback channels. */
export function stepChannels(step: StepRow): StepRow[] {
  const named = step.configuration.fallback_channels;
  const fallbacks = Array.isArray(named)
    ? named.filter((c): c is StepRow["channel_type"] => CHANNELS.has(String(c)))
    : [];
  return [step, ...fallbacks.map((channel_type) => ({ ...step, channel_type }))];
}

/**
 * Runs a step on its channel, then on each fallback channel for the executions whose message
 * failed on the channel before. Each execution's run is that of the last channel it was sent on
 * (the channel recorded with it, so statistics count it there). An execution waiting on a channel
 * (a temporary failure, quiet hours) is pending: the step's next pass takes it up where it was.
 */
export async function sendThroughChannels(
  step: StepRow,
  claimed: Claimed[],
  sendOn: (channel: StepRow, claimed: Claimed[]) => Promise<ChannelOutcome>,
  now: number,
): Promise<ChannelOutcome & { waiting: Waiting[] }> {
  const channels = stepChannels(step);
  const waitMs = fallbackAfterMs(step);
  const out: ChannelOutcome & { waiting: Waiting[] } = { runs: [], pending: [], left: { pending: 0 }, waiting: [] };
  let todo = claimed;
  for (const [i, channel] of channels.entries()) {
    const pass = await sendOn(channel, todo);
    out.pending.push(...pass.pending);
    out.left = joinLeft(out.left, pass.left);
    out.retryAfterMs = latest(out.retryAfterMs, pass.retryAfterMs);
    const next = new Set<string>();
    const last = i === channels.length - 1;
    for (const run of pass.runs) {
      const { sent_at, delivery_status, ...stepRun } = run;
      const unreported = waitMs !== undefined && channel.channel_type === "whatsapp" && run.status === "SENT" &&
        !reportsReached(delivery_status);
      const due = (sent_at ?? now) + (waitMs ?? 0);
      if (!last && unreported && due > now) out.waiting.push({ execution_id: run.execution_id, due });
      // A failure with no message (a contact gone) has no one to fall back to.
      else if (!last && (unreported || (run.status === "FAILED" && run.message_id !== null))) {
        next.add(run.execution_id);
      } else out.runs.push({ ...stepRun, channel: channel.channel_type });
    }
    todo = todo.filter((c) => next.has(c.id));
    if (todo.length === 0) break;
  }
  return out;
}

/** The step's `fallback_after_minutes` in ms, if it names one (validated: api/workflows/schemas.ts). */
function fallbackAfterMs(step: StepRow): number | undefined {
  const minutes = step.configuration.fallback_after_minutes;
  return typeof minutes === "number" && minutes > 0 ? minutes * 60_000 : undefined;
}

/** What two passes left, together: every pending message, the longest retry wait, the first hold's end. */
function joinLeft(a: Unfinished, b: Unfinished): Unfinished {
  return {
    pending: a.pending + b.pending,
    retryAfterMs: latest(a.retryAfterMs, b.retryAfterMs),
    heldUntil: earliest(a.heldUntil, b.heldUntil),
  };
}

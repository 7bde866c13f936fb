/**
 * Channel fallback in a workflow step: a step naming `fallback_channels` (api/workflows/schemas.ts)
 * sends its template on each of them in turn to the contacts the channel before did not reach, as
 * a send does (worker/fallback.ts): a message that failed (no address, a refusal, retries given up)
 * falls back; a filtered one (a preference off, an unsubscribed contact) never does, nor an
 * execution whose contact is gone. Each channel is its own pipeline execution (stepExecutionId
 * takes the channel), so a contact gets at most one message per channel of a step, however often
 * the step's job runs: a redelivered pass finds the messages recorded and sends none again.
 */
import type { StepRow } from "../../shared/workflows/definitions.ts";
import type { Unfinished } from "../hold.ts";
import type { Claimed, StepRun } from "./queries.ts";

/** What one channel's pass of a step did: final runs, executions waiting, what is left to retry. */
export interface ChannelOutcome {
  runs: StepRun[];
  pending: string[];
  retryAfterMs?: number;
  left: Unfinished;
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
): Promise<ChannelOutcome> {
  const channels = stepChannels(step);
  const out: ChannelOutcome = { runs: [], pending: [], left: { pending: 0 } };
  let todo = claimed;
  for (const [i, channel] of channels.entries()) {
    const pass = await sendOn(channel, todo);
    out.pending.push(...pass.pending);
    out.left = joinLeft(out.left, pass.left);
    out.retryAfterMs = maxOf(out.retryAfterMs, pass.retryAfterMs);
    const next = new Set<string>();
    const last = i === channels.length - 1;
    for (const run of pass.runs) {
      // A failure with no message (a contact gone) has no one to fall back to.
      if (!last && run.status === "FAILED" && run.message_id !== null) next.add(run.execution_id);
      else out.runs.push({ ...run, channel: channel.channel_type });
    }
    todo = todo.filter((c) => next.has(c.id));
    if (todo.length === 0) break;
  }
  return out;
}

/** What two passes left, together: every pending message, the longest retry wait, the first hold's end. */
function joinLeft(a: Unfinished, b: Unfinished): Unfinished {
  const heldUntil = a.heldUntil === undefined
    ? b.heldUntil
    : b.heldUntil === undefined
    ? a.heldUntil
    : Math.min(a.heldUntil, b.heldUntil);
  return { pending: a.pending + b.pending, retryAfterMs: maxOf(a.retryAfterMs, b.retryAfterMs), heldUntil };
}

function maxOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

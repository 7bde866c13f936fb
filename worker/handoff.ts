import { log } from "../shared/log.ts";
import { metrics } from "../shared/metrics.ts";
import { type OutboundMessage, type Provider, ProviderError } from "../shared/providers/types.ts";
import type { Prepared } from "./prepare.ts";

/** Provider calls in flight at once within one pass. */
const SEND_CONCURRENCY = 16;

/** A message to hand to a real provider after the recording transaction. */
export interface ToSend {
  p: Prepared;
  message: OutboundMessage;
  provider: Provider;
  cost: number;
  /** An earlier pass handed it to its provider and did not live to record the answer (see `handed_at`). */
  handedBefore?: boolean;
}

/**
 * What deliver() records around each hand-over to a provider that cannot take a message twice, so
 * that a crash leaves as few messages as possible whose fate is unknown.
 */
export interface HandOverLog {
  /** Before the call: from now on the message may be in the provider's hands. */
  handing(t: ToSend): Promise<void>;
  /** After the answer: a message sent, or one the provider did not take (temporary), is settled at once. */
  answered(t: ToSend, outcome: Outcome): Promise<void>;
}

/** What a provider made of one message. */
export type Outcome =
  | { ok: true; id: string; providerMessageId: string }
  | { ok: false; id: string; error: string; temporary: boolean; invalidToken: boolean; retryAfterMs?: number };

/**
 * Hands messages to their real providers, SEND_CONCURRENCY at a time (step 2 of deliver()). A
 * provider that cannot take a message twice (`resendable` false: Twilio) gets it only once
 * `handOverLog` has recorded the hand-over, and never gets a message an earlier pass handed over.
 */
export async function sendAll(toSend: ToSend[], handOverLog: HandOverLog): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(toSend.length);
  let next = 0;
  const worker = async () => {
    while (next < toSend.length) {
      const i = next++;
      outcomes[i] = await handOver(toSend[i], handOverLog);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, toSend.length) }, worker));
  return outcomes;
}

/**
 * Why a message handed to a provider by a pass that then stopped (a crash, a kill) is not handed
 * again: the provider may have sent it, and it cannot tell a second request from a new message.
 */
function mayHaveSentReason(t: ToSend): string {
  return `Cannot send ${t.message.channel}: the service stopped while ${t.provider.name} was sending it, so it ` +
    "may have been sent; it is not tried again (a second try could send it twice)";
}

/** A message that failed without a provider's error of its own; `temporary` when a later try may send it. */
function failure(id: string, error: string, temporary: boolean): Outcome {
  return { ok: false, id, error, temporary, invalidToken: false };
}

async function handOver(t: ToSend, handOverLog: HandOverLog): Promise<Outcome> {
  if (t.provider.resendable) return await sendOne(t);
  const id = t.message.id;
  if (t.handedBefore) return failure(id, mayHaveSentReason(t), false);
  try {
    await handOverLog.handing(t);
  } catch (err) {
    // Not recorded, so not handed over: the message stays pending for the next try.
    return failure(id, `Cannot record the hand-over: ${String(err)}`, true);
  }
  const outcome = await sendOne(t);
  try {
    await handOverLog.answered(t, outcome);
  } catch (err) {
    // The pass's own UPDATE still records the outcome at its end; only a crash before then loses it.
    log("warn", "cannot record a provider's answer at once", { message_id: id, error: String(err) });
  }
  return outcome;
}

async function sendOne({ message, provider }: ToSend): Promise<Outcome> {
  const started = performance.now();
  try {
    const result = await provider.send(message);
    return { ok: true, id: message.id, providerMessageId: result.providerMessageId };
  } catch (err) {
    if (err instanceof ProviderError) {
      return {
        ok: false,
        id: message.id,
        error: err.message,
        temporary: err.temporary,
        invalidToken: err.invalidToken,
        retryAfterMs: err.retryAfterMs,
      };
    }
    // Anything else (a network failure the client did not classify) may succeed on a retry.
    return failure(message.id, String(err), true);
  } finally {
    metrics.providerLatency.observe(
      { provider: provider.name, channel: message.channel },
      (performance.now() - started) / 1000,
    );
  }
}

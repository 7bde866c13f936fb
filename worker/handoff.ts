import { log } from "../shared/log.ts";
import { metrics } from "../shared/metrics.ts";
import type { Attempt } from "../shared/providers/failover.ts";
import { type OutboundMessage, type Provider, ProviderError } from "../shared/providers/types.ts";
import type { Prepared } from "./prepare.ts";

/**
 * Provider calls in flight at once within one pass. It bounds what a crash can leave uncertain: a
 * hand-over is claimed only as its call starts and its worker takes no other until the answer is
 * recorded, so a pass holds at most this many messages claimed and unanswered, and a process this
 * many times the passes it runs at once (the worker's `deliveries` limit: 8 on a PostgreSQL server,
 * 4 on PGlite; of them at most PASSES_AT_ONCE merged direct-send passes, coalescer.ts).
 */
export const SEND_CONCURRENCY = 64;

/**
 * How long a message handed to a provider that cannot take it twice may wait for its answer to be
 * recorded before another pass judges it abandoned (its pass died). Longer than any such provider
 * request may take (the Twilio SDK gives up after 30 s), so a live pass is never judged.
 */
export const HAND_OVER_WINDOW_MS = 60_000;

/** A message to hand to a real provider after the recording transaction. */
export interface ToSend {
  p: Prepared;
  message: OutboundMessage;
  provider: Provider;
  cost: number;
  /** When another pass handed it to its provider, not having recorded the answer yet (`handed_at`, ms). */
  handedAt?: number;
  /** The channel account that pass handed it to (`handed_account`), when it went through failover. */
  handedAccount?: string;
  /** Replaces the hand-over to `provider`: failover over the team's channel accounts (failover_send.ts). */
  handOver?: (context: HandOverContext) => Promise<Outcome>;
}

/** What a hand-over shares with the others of its pass. */
export interface HandOverContext {
  handOverLog: HandOverLog;
  /** Provider ids this pass has matched to an abandoned message, so that two alike get two ids. */
  matched: Set<string>;
}

/**
 * What deliver() records around each hand-over to a provider that cannot take a message twice, so
 * that a crash leaves as few messages as possible whose fate is unknown. The calls of concurrent
 * hand-overs may be recorded together (hand_over_log.ts); each resolves once its own is committed.
 */
export interface HandOverLog {
  now(): number;
  /** Before the call: claims the message, unless another pass holds it. True when claimed. */
  handing(t: ToSend): Promise<boolean>;
  /**
   * After the answer: a message sent, or one the provider did not take (temporary), is settled at
   * once. True when a sent message was recorded so.
   */
  answered(t: ToSend, outcome: Outcome): Promise<boolean>;
  /** Of these provider message ids, those some message is recorded with already. */
  recordedIds(providerMessageIds: string[]): Promise<Set<string>>;
}

/**
 * What the row of a message sent through failover takes with its sent status, in the same statement
 * (so that an outage between two writes cannot leave it sent without them): its attempts not yet
 * recorded, and the provider of the account that sent it.
 */
export interface SentWith {
  attempts: readonly Attempt[];
  provider: string;
}

/** What a provider made of one message (`recorded`: the hand-over log recorded it sent already). */
export type Outcome =
  | { ok: true; id: string; providerMessageId: string; recorded?: boolean; sentWith?: SentWith }
  | {
    ok: false;
    id: string;
    error: string;
    temporary: boolean;
    invalidToken: boolean;
    retryAfterMs?: number;
    /**
     * Another pass holds the message and may be sending it: never given up on, even by a last try
     * (that pass records its answer, or a pass after its window fails it as possibly sent).
     */
    held?: boolean;
  };

/**
 * Hands messages to their real providers, SEND_CONCURRENCY at a time (step 2 of deliver()). A
 * provider that cannot take a message twice (`resendable` false: Twilio) gets it only once
 * `handOverLog` has claimed it, and never gets a message another pass claimed: once that pass's
 * window is over, the message is looked up in the provider's log (see settleAbandoned).
 */
export async function sendAll(toSend: ToSend[], handOverLog: HandOverLog): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(toSend.length);
  // Provider ids this pass has matched to an abandoned message, so that two alike get two ids.
  const matched = new Set<string>();
  let next = 0;
  const worker = async () => {
    while (next < toSend.length) {
      const i = next++;
      outcomes[i] = await handOver(toSend[i], handOverLog, matched);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, toSend.length) }, worker));
  return outcomes;
}

/**
 * Why a message handed to a provider by a pass that then stopped (a crash, a kill) is not handed
 * again: the provider may have sent it, and it cannot tell a second request from a new message.
 */
export function mayHaveSentReason(t: ToSend): string {
  return `Cannot send ${t.message.channel}: the service stopped while ${t.provider.name} was sending it, so it ` +
    "may have been sent; it is not tried again (a second try could send it twice)";
}

/** A message that failed without a provider's error of its own; `temporary` when a later try may send it. */
export function failure(id: string, error: string, temporary: boolean): Outcome {
  return { ok: false, id, error, temporary, invalidToken: false };
}

/** Another pass holds the message: try again once its hand-over window is over. */
export function heldElsewhere(t: ToSend, waitMs: number): Outcome {
  const error = `Cannot send ${t.message.channel}: another pass is handing it to ${t.provider.name}`;
  return { ok: false, id: t.message.id, error, temporary: true, invalidToken: false, retryAfterMs: waitMs, held: true };
}

async function handOver(t: ToSend, handOverLog: HandOverLog, matched: Set<string>): Promise<Outcome> {
  if (t.handOver) return await t.handOver({ handOverLog, matched });
  if (t.provider.resendable) return await sendOne(t);
  const id = t.message.id;
  if (t.handedAt !== undefined) {
    const left = t.handedAt + HAND_OVER_WINDOW_MS - handOverLog.now();
    return left > 0 ? heldElsewhere(t, left) : await settleAbandoned(t, t.handedAt, { handOverLog, matched });
  }
  try {
    if (!await handOverLog.handing(t)) return heldElsewhere(t, HAND_OVER_WINDOW_MS);
  } catch (err) {
    // Not recorded, so not handed over: the message stays pending for the next try.
    return failure(id, `Cannot record the hand-over: ${String(err)}`, true);
  }
  const outcome = await sendOne(t);
  try {
    if (await handOverLog.answered(t, outcome) && outcome.ok) outcome.recorded = true;
  } catch (err) {
    // The pass's own UPDATE still records the outcome at its end; only a crash before then loses it.
    log("warn", "cannot record a provider's answer at once", { message_id: id, error: String(err) });
  }
  return outcome;
}

/**
 * A message a pass handed to its provider and then abandoned (it died before recording the
 * answer): sent, with the provider's id, when the provider's log has it (Twilio's Messages list:
 * most such messages did reach it); failed as possibly sent otherwise, as it is when the provider
 * keeps no log. A log that cannot be read is a temporary failure, so the message is looked up again
 * on the job's next try; on its last, it is failed and refunded like one not found, since an unknown
 * outcome must not hold a send open forever. Email and push providers are `resendable`: never here.
 */
export async function settleAbandoned(
  t: ToSend,
  handedAt: number,
  { handOverLog, matched }: HandOverContext,
): Promise<Outcome> {
  const id = t.message.id;
  if (!t.provider.find) return failure(id, mayHaveSentReason(t), false);
  let found: string[];
  let recorded: Set<string>;
  try {
    found = await t.provider.find(t.message, { since: handedAt, until: handedAt + HAND_OVER_WINDOW_MS });
    recorded = found.length > 0 ? await handOverLog.recordedIds(found) : new Set();
  } catch (err) {
    log("warn", "cannot look a message up in its provider's log", { message_id: id, error: String(err) });
    return failure(id, `${mayHaveSentReason(t)}; ${t.provider.name}'s message log could not be read: ${err}`, true);
  }
  // The oldest not yet some other message's: of two alike, the one handed over first was created first.
  const providerMessageId = found.find((sid) => !recorded.has(sid) && !matched.has(sid));
  if (providerMessageId === undefined) return failure(id, mayHaveSentReason(t), false);
  matched.add(providerMessageId);
  log("info", "an abandoned message was found in its provider's log", {
    message_id: id,
    provider_message_id: providerMessageId,
  });
  return { ok: true, id, providerMessageId };
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

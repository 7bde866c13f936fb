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
}

/** What a provider made of one message. */
export type Outcome =
  | { ok: true; id: string; providerMessageId: string }
  | { ok: false; id: string; error: string; temporary: boolean; invalidToken: boolean; retryAfterMs?: number };

/** Hands messages to their real providers, SEND_CONCURRENCY at a time (step 2 of deliver()). */
export async function sendAll(toSend: ToSend[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(toSend.length);
  let next = 0;
  const worker = async () => {
    while (next < toSend.length) {
      const i = next++;
      outcomes[i] = await sendOne(toSend[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, toSend.length) }, worker));
  return outcomes;
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
    return { ok: false, id: message.id, error: String(err), temporary: true, invalidToken: false };
  } finally {
    metrics.providerLatency.observe(
      { provider: provider.name, channel: message.channel },
      (performance.now() - started) / 1000,
    );
  }
}

import { MAX_QUEUE_DELAY_MS } from "../shared/sending/jobs.ts";
import { sendKeys } from "../shared/sending/keys.ts";

/**
 * The rate-limited queue of promotional push (the specification's push send: transactional push
 * takes the priority queue, promotional a normal, rate-limited one). A promotional fan-out books
 * its batches, `contactsPerBatch` contacts each, one after another from the time the team's earlier
 * promotional fan-outs have booked up to, at `rate` contacts a second, and answers each batch's
 * queue delay. The booking joins the caller's commit with a check: of two dispatches of one team,
 * the one that commits second fails and books again after the first (see handleDispatch).
 * Transactional sends are not booked, so they never wait behind promotional ones.
 */
export async function bookPromotionalBatches(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  teamId: string,
  batches: number,
  options: { contactsPerBatch: number; rate: number; now: number },
): Promise<number[]> {
  const { contactsPerBatch, rate, now } = options;
  const entry = await kv.get<number>(sendKeys.pushPace(teamId));
  const start = Math.max(now, entry.value ?? 0);
  const spacing = (contactsPerBatch * 1000) / rate;
  const booked = start + batches * spacing;
  op.check(entry).set(entry.key, booked, { expireIn: booked - now + 60_000 });
  // Past the queue's longest delay (only a rate near 0 gets there) a batch goes at that delay.
  return Array.from({ length: batches }, (_, i) => Math.min(MAX_QUEUE_DELAY_MS, Math.round(start + i * spacing - now)));
}

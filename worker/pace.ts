import type { SendState } from "../shared/engine/send_state.ts";
import type { UnitOfWork } from "../shared/engine/ports.ts";
import { MAX_QUEUE_DELAY_MS } from "../shared/sending/jobs.ts";

/**
 * The rate-limited queue of promotional push (the specification's push send: transactional push
 * takes the priority queue, promotional a normal, rate-limited one). A promotional fan-out books
 * its batches, `contactsPerBatch` contacts each, one after another from the time the team's earlier
 * promotional fan-outs have booked up to, at `rate` contacts a second, and answers each batch's
 * queue delay. The booking joins the caller's unit of work by compare-and-set: of two dispatches of
 * one team, the one that commits second loses and books again after the first (see handleDispatch).
 * Transactional sends are not booked, so they never wait behind promotional ones.
 */
export async function bookPromotionalBatches(
  state: SendState,
  unit: UnitOfWork,
  teamId: string,
  batches: number,
  options: { contactsPerBatch: number; rate: number; now: number },
): Promise<number[]> {
  const { contactsPerBatch, rate, now } = options;
  const read = await state.pushPace(teamId);
  const start = Math.max(now, read?.value ?? 0);
  const spacing = (contactsPerBatch * 1000) / rate;
  await state.putPushPace(teamId, start + batches * spacing, read?.version ?? null, unit);
  // Past the queue's longest delay (only a rate near 0 gets there) a batch goes at that delay.
  return Array.from({ length: batches }, (_, i) => Math.min(MAX_QUEUE_DELAY_MS, Math.round(start + i * spacing - now)));
}

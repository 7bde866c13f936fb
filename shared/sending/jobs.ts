import { z } from "zod";
import { JOB_BACKOFF_MS } from "../backoff.ts";
import { sendKeys } from "./keys.ts";
import { SendSpecSchema } from "./spec.ts";

/**
 * Deno KV refuses a queue delay over 30 days: a longer wait is chained (a job that fires before it is
 * due enqueues itself again).
 */
export const MAX_QUEUE_DELAY_MS = 30 * 24 * 3_600_000;

/** The queue delay of a job due at `due`: never negative, never over the queue's maximum. */
export function queueDelay(due: number, now: number): number {
  return Math.min(MAX_QUEUE_DELAY_MS, Math.max(0, due - now));
}

/**
 * How a job carrying only its trigger's id (`send-stored`, `workflow-start-stored`) is enqueued, at
 * accept and again for each 30-day link of a long wait: due at its time, and kept when the queue
 * gives up on it, so that its trigger shows failed rather than pending for good.
 */
export function storedJobOptions(job: { id: string; trigger_id: string; due_at?: number }, now: number) {
  return {
    delay: queueDelay(job.due_at ?? now, now),
    backoffSchedule: JOB_BACKOFF_MS,
    keysIfUndelivered: [sendKeys.undelivered(job.trigger_id, job.id)],
  };
}

/** Sends accepted together (one group commit), delivered by the worker. */
export const SendGroupJobSchema = z.object({
  type: z.literal("send-group"),
  id: z.string(),
  sends: z.array(SendSpecSchema),
  /** Earlier tries that met a temporary provider failure. */
  attempt: z.number().int().nonnegative().default(0),
});
export type SendGroupJob = z.input<typeof SendGroupJobSchema>;

/** A send recorded in Postgres (scheduled, or too large for a queue message), named by its trigger. */
export const SendStoredJobSchema = z.object({
  type: z.literal("send-stored"),
  id: z.string(),
  trigger_id: z.string(),
  /** When a scheduled send is due (ms since the epoch); a job that fires earlier waits again. */
  due_at: z.number().optional(),
});
export type SendStoredJob = z.input<typeof SendStoredJobSchema>;

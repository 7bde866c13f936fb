import { z } from "zod";

/**
 * Sends a fallback execution's message to the contacts one batch of the execution before it did not
 * reach: those whose every message failed (`failed`: no address, a refusal, retries given up), or,
 * for WhatsApp, whose messages have no delivery report yet when the job runs (`undelivered`, run
 * `fallback_after_minutes` after the batch). Its batch number within the fallback execution is
 * derived from the batch it follows (see fallbackBatchNo), so a redelivered batch makes no second job.
 */
export const FallbackJobSchema = z.object({
  type: z.literal("fallback"),
  id: z.string(),
  trigger_id: z.string(),
  /** The fallback execution. */
  execution_id: z.string(),
  batch_no: z.number().int().nonnegative(),
  /** The execution and batch whose recipients it takes. */
  from_execution_id: z.string(),
  from_batch_no: z.number().int().nonnegative(),
  reason: z.enum(["failed", "undelivered"]),
  /** The contacts of a fan-out page (ids after `after`, up to `until`); null for a one-contact send. */
  after: z.string().nullable(),
  until: z.string().nullable(),
  /** Earlier tries that met a temporary provider failure. */
  attempt: z.number().int().nonnegative().default(0),
});
export type FallbackJob = z.infer<typeof FallbackJobSchema>;

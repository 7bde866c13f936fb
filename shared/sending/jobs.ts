import { z } from "zod";
import { SendSpecSchema } from "./spec.ts";

/** Retry delays of queue jobs (ms): the queue redelivers a job whose handler threw. */
export const JOB_BACKOFF_MS = [1_000, 5_000, 15_000, 60_000, 300_000];

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
});
export type SendStoredJob = z.input<typeof SendStoredJobSchema>;

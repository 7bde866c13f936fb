import { z } from "@hono/zod-openapi";
import { parseTimestamp } from "../../shared/timestamps.ts";

/** The names under which clients send a schedule time (`trigger_at`, `triggerAt`, `scheduled_at`). */
const ALIASES = ["trigger_at", "triggerAt", "scheduled_at"] as const;

/**
 * Wraps an object schema so that `triggerAt` and `scheduled_at` arrive as `trigger_at` (the first
 * one given wins; null counts as not given).
 */
export function withTriggerAtAliases<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    const body = { ...(value as Record<string, unknown>) };
    const given = ALIASES.map((k) => body[k]).find((v) => v !== undefined && v !== null);
    for (const k of ALIASES) delete body[k];
    return given === undefined ? body : { ...body, trigger_at: given };
  }, schema);
}

/** A `trigger_at` field whose malformed value answers `message`. */
export function triggerAtField(message: string) {
  return z.string({ error: message }).refine((s) => parseTimestamp(s) !== undefined, { error: message })
    .openapi({ description: "ISO 8601 UTC; schedules the start", example: "2026-11-21T10:00:00.000Z" });
}

import { z } from "@hono/zod-openapi";

const ISO_8601 = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Epoch milliseconds of an ISO 8601 timestamp, or undefined when it is not one. A time without a
 * zone is UTC (the interface speaks ISO 8601 UTC); a date alone is its midnight UTC.
 */
export function parseTimestamp(text: string): number | undefined {
  const m = ISO_8601.exec(text.trim());
  if (!m) return undefined;
  const [, date, time, fraction, zone] = m;
  const millis = fraction ? fraction.slice(0, 4).padEnd(4, "0") : "";
  const normalized = time ? `${date}T${time}${millis}${zone ? zone.toUpperCase() : "Z"}` : `${date}T00:00:00Z`;
  const ms = Date.parse(normalized);
  return Number.isNaN(ms) ? undefined : ms;
}

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

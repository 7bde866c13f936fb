import { z } from "@hono/zod-openapi";
import type { RequestExamples } from "./examples.ts";

/** A timestamp as answers show it: ISO 8601 UTC with milliseconds. */
export const timestamp = z.string().openapi({ format: "date-time", example: "2026-11-21T10:00:00.000Z" });

/** Longest id or external id a request may name a record by (a contact's `external_id` is at most this). */
export const MAX_ID_LENGTH = 255;
/**
 * Longest key or id a request may name a dashboard-made record by (a template, a sender identity, a
 * segment): the longest the admin API lets one be named.
 */
export const MAX_KEY_LENGTH = 200;

/** The longest tag: on a contact, in a send, a workflow start, a workflow's conditions or a segment. */
export const MAX_TAG_LENGTH = 255;
/**
 * The most tags a send, a workflow start or a segment names. Bounded: they travel in every job of
 * its fan-out, and a 70,000-character tag was accepted, then its job could not be stored and the
 * send failed minutes later.
 */
export const MAX_SEND_TAGS = 100;

/** The longest email address (RFC 5321), from the one email check. */
export { MAX_EMAIL_LENGTH } from "../email.ts";

/**
 * A field naming an existing record by its id or external id. Bounded, so that a 404 that shows
 * the id (`Contact with external_id '…' not found`) can never be huge: longer is a 400.
 */
export const RecordId = z.string().max(MAX_ID_LENGTH);
/** A field naming a template, a sender identity or a segment by its key or id. */
export const RecordKey = z.string().max(MAX_KEY_LENGTH);

/** Shape A error body (every error but authentication's). */
export const ErrorBody = z.object({
  statusCode: z.number().int(),
  message: z.union([z.string(), z.array(z.string())]),
  error: z.string(),
  code: z.string(),
  details: z.record(z.string(), z.unknown()).optional().openapi({
    description: "{field, code} where the specification shows one",
  }),
}).openapi("Error");

/**
 * The `errors(...statuses)` of a group of routes: response entries of Shape A errors, each status
 * with the description the group gives it.
 */
export function errorResponses<S extends number>(descriptions: Record<S, string>) {
  return (...statuses: S[]) =>
    Object.fromEntries(
      statuses.map((
        s,
      ) => [s, { description: descriptions[s], content: { "application/json": { schema: ErrorBody } } }]),
    );
}

/**
 * A JSON body as a createRoute `request.body` (required, so a missing body is validated as `{}`),
 * with the named examples the document shows.
 */
export function jsonBody<T extends z.ZodType>(schema: T, examples?: RequestExamples) {
  return { required: true, content: { "application/json": { schema, ...(examples ? { examples } : {}) } } };
}

/** A JSON response entry. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

import { z } from "@hono/zod-openapi";

/** A timestamp as answers show it: ISO 8601 UTC with milliseconds. */
export const timestamp = z.string().openapi({ format: "date-time", example: "2026-11-21T10:00:00.000Z" });

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

/** A JSON body as a createRoute `request.body` (required, so a missing body is validated as `{}`). */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } };
}

/** A JSON response entry. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

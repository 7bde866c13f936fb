import assert from "node:assert/strict";
import { z } from "zod";
import { validationError } from "./validation.ts";

function linesFor(schema: z.ZodType, data: unknown): string | string[] {
  const result = schema.safeParse(data);
  assert.equal(result.success, false);
  return validationError(result.error!, data).body;
}

Deno.test("validationError() tells a missing field from a wrong-typed one", () => {
  const schema = z.object({ title: z.string(), count: z.number(), kind: z.enum(["a", "b"]) });
  assert.deepEqual(linesFor(schema, { count: "x", kind: "c" }), [
    "title should not be empty",
    "count must be a number",
    "kind must be one of: a, b",
  ]);
  assert.deepEqual(linesFor(schema, { title: "t", count: 1 }), ["kind should not be empty"]);
});

Deno.test("validationError() names nested fields and empty strings", () => {
  const schema = z.object({ items: z.array(z.object({ name: z.string().min(1) })) });
  assert.deepEqual(linesFor(schema, { items: [{ name: "" }] }), ["items.0.name should not be empty"]);
});

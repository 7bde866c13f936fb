import assert from "node:assert/strict";
import { checkSchema, documentResolver } from "./schema_check.ts";

const doc = {
  components: {
    schemas: {
      Contact: {
        type: "object",
        required: ["id", "email", "tags"],
        additionalProperties: false,
        properties: {
          id: { type: "string", format: "uuid" },
          email: { type: "string", format: "email" },
          tags: { type: "array", items: { type: "string" }, maxItems: 2 },
          created_at: { type: "string", format: "date-time" },
          plan: { anyOf: [{ type: "string", enum: ["free", "pro"] }, { type: "null" }] },
          count: { type: "integer", minimum: 0 },
        },
      },
    },
  },
};
const resolve = documentResolver(doc);
const ref = { $ref: "#/components/schemas/Contact" };
const good = {
  id: "0b7d9f5e-6a38-4c1e-9a51-3b1f0c2d4e5f",
  email: "a@example.com",
  tags: ["x"],
  created_at: "2026-11-21T10:00:00.000Z",
  plan: null,
  count: 3,
};

Deno.test("checkSchema() accepts an answer that matches its schema", () => {
  assert.deepEqual(checkSchema(ref, good, resolve), []);
});

Deno.test("checkSchema() names every way an answer departs from its schema", () => {
  const bad = {
    id: "not-a-uuid",
    tags: ["x", 1, "z"],
    created_at: "yesterday",
    plan: "gold",
    count: 1.5,
    extra: true,
  };
  assert.deepEqual(checkSchema(ref, bad, resolve, "$", 20).sort(), [
    "$.count: expected integer, got number",
    '$.created_at: not a date-time: "yesterday"',
    '$.id: not a uuid: "not-a-uuid"',
    '$.plan: matches none of anyOf ("gold")',
    "$.tags: more than 2 items",
    "$.tags[1]: expected string, got integer",
    "$: missing required email",
    "$: unexpected property extra",
  ]);
});

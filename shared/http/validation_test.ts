import assert from "node:assert/strict";
import { z } from "zod";
import { isStorableText, storable, UNSTORABLE_TEXT, unstorablePath, validationError } from "./validation.ts";

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

Deno.test("validationError() words exclusive bounds, objects and a wrong type as a reader would", () => {
  const schema = z.object({
    minutes: z.number().positive(),
    ratio: z.number().gt(1).lt(5),
    meta: z.record(z.string(), z.unknown()),
    channels: z.array(z.string()).max(3),
  });
  assert.deepEqual(linesFor(schema, { minutes: 0, ratio: 1, meta: 5, channels: "email" }), [
    "minutes must be a positive number",
    "ratio must be greater than 1",
    "meta must be an object",
    "channels must be an array",
  ]);
  assert.deepEqual(linesFor(schema, { minutes: 1, ratio: 5, meta: {}, channels: ["a", "b", "c", "d"] }), [
    "ratio must be less than 5",
    "channels must contain at most 3 elements",
  ]);
});

Deno.test("validationError() names nested fields and empty strings", () => {
  const schema = z.object({ items: z.array(z.object({ name: z.string().min(1) })) });
  assert.deepEqual(linesFor(schema, { items: [{ name: "" }] }), ["items.0.name should not be empty"]);
});

Deno.test("isStorableText() refuses U+0000 and unpaired surrogates, not surrogate pairs", () => {
  for (const text of ["", "plain", "Zoë", "😀", "\ud83d\ude00", "\u0001\uffff"]) {
    assert.equal(isStorableText(text), true, text);
  }
  for (const text of ["\u0000", "a\u0000b", "\ud800", "x\udc00", "\ude00\ud83d", "😀".slice(0, 1)]) {
    assert.equal(isStorableText(text), false, JSON.stringify(text));
  }
});

Deno.test("unstorablePath() finds a bad string at any depth, as a value or a key", () => {
  assert.equal(unstorablePath({ a: "x", b: [1, null, true, { c: "😀" }] }), undefined);
  assert.equal(unstorablePath(42), undefined);
  assert.deepEqual(unstorablePath("\u0000"), []);
  assert.deepEqual(unstorablePath({ a: "ok", b: "b\u0000" }), ["b"]);
  assert.deepEqual(unstorablePath({ a: { b: [1, "two", { c: "\ud800" }] } }), ["a", "b", 2, "c"]);
  assert.deepEqual(unstorablePath({ a: { ["k\u0000"]: 1 } }), ["a", "k\u0000"]);
  assert.deepEqual(unstorablePath([["ok"], ["ok", "\udfff"]]), [1, 1]);
  // The first in document order.
  assert.deepEqual(unstorablePath({ a: ["\u0000"], b: "\u0000" }), ["a", 0]);
});

Deno.test("unstorablePath() walks any nesting JSON.parse accepts, without recursion", () => {
  const depth = 100_000;
  const deep = JSON.parse(`${"[".repeat(depth)}"\\u0000"${"]".repeat(depth)}`);
  const path = unstorablePath(deep);
  assert.equal(path?.length, depth);
  assert.ok(path!.every((key) => key === 0));
  const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, { v: `value ${i}` }]));
  assert.equal(unstorablePath(wide), undefined);
});

Deno.test("storable(): a bad string is answered 400 UNSTORABLE_TEXT, code invalid_characters, once the rest passed", () => {
  const schema = storable(z.object({ name: z.string(), variables: z.record(z.string(), z.unknown()).optional() }));
  assert.equal(schema.safeParse({ name: "n", variables: { a: ["ok", "😀"] } }).success, true);
  const data = { name: "n", variables: { a: [{ b: "\u0000" }] } };
  const result = schema.safeParse(data);
  assert.equal(result.success, false);
  assert.deepEqual(result.error!.issues.map((i) => i.path), [["variables", "a", 0, "b"]]);
  const error = validationError(result.error!, data);
  assert.equal(error.status, 400);
  assert.equal(error.code, "invalid_characters");
  assert.equal(error.body, UNSTORABLE_TEXT);
  assert.equal(error.body, "Text must not contain NUL (U+0000) characters or unpaired surrogates");
  assert.deepEqual(error.extra, {});
  // A body with other problems is answered with them.
  assert.deepEqual(linesFor(schema, { variables: { a: "\u0000" } }), ["name should not be empty"]);
});

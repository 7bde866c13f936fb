import assert from "node:assert/strict";
import { z } from "zod";
import {
  bodyRefusal,
  isStorableText,
  MAX_BODY_DEPTH,
  PROTO_KEY,
  protoKeyRefusal,
  protoKeyRefusalOfText,
  UNSTORABLE_TEXT,
  validationError,
} from "./validation.ts";

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

Deno.test("bodyRefusal() refuses text Postgres cannot store, as a value or a key, at any depth", () => {
  assert.equal(bodyRefusal({ a: "x", b: [1, null, true, { c: "😀" }] }), undefined);
  assert.equal(bodyRefusal(42), undefined);
  for (
    const bad of ["\u0000", { a: "ok", b: "b\u0000" }, { a: { b: [1, "two", { c: "\ud800" }] } }, {
      a: { ["k\u0000"]: 1 },
    }, [["ok"], ["ok", "\udfff"]]]
  ) {
    const refusal = bodyRefusal(bad);
    assert.equal(refusal?.status, 400, JSON.stringify(bad));
    assert.equal(refusal?.code, "invalid_characters");
    assert.equal(refusal?.body, UNSTORABLE_TEXT);
  }
  assert.equal(UNSTORABLE_TEXT, "Text must not contain NUL (U+0000) characters or unpaired surrogates");
});

Deno.test("protoKeyRefusal() refuses a key __proto__ at any depth, which copying an object would drop", () => {
  assert.equal(protoKeyRefusal(JSON.parse('{"proto": 1, "constructor": {"prototype": 2}, "a": [[{}]]}')), undefined);
  for (const text of ['{"__proto__": 1}', '{"a": [{"b": {"__proto__": {"polluted": true}}}]}']) {
    const refusal = protoKeyRefusal(JSON.parse(text));
    assert.equal(refusal?.status, 400, text);
    assert.equal(refusal?.code, "invalid_key");
    assert.equal(refusal?.body, PROTO_KEY);
  }
});

Deno.test("protoKeyRefusalOfText() finds a __proto__ key however it is spelt, and passes any other text", () => {
  const texts = ['{"__proto__": 1}', '{"a": [{"\\u005f_proto__": 2}]}', '{"x": {"__pro\\u0074o__": {}}}'];
  for (const text of texts) {
    assert.equal(protoKeyRefusalOfText(text)?.code, "invalid_key", text);
  }
  for (const text of ['{"name": "__proto__"}', '{"a": "\\u00e9t\\u00e9"}', '{"proto": 1}', "", "{not json"]) {
    assert.equal(protoKeyRefusalOfText(text), undefined, text);
  }
});

Deno.test("bodyRefusal() refuses nesting over MAX_BODY_DEPTH, walking any JSON.parse accepts without recursion", () => {
  const nest = (n: number) => JSON.parse(`${"[".repeat(n)}${"]".repeat(n)}`);
  assert.equal(bodyRefusal(nest(MAX_BODY_DEPTH)), undefined);
  assert.equal(bodyRefusal(nest(MAX_BODY_DEPTH + 1))?.code, "body_too_deep");
  assert.equal(bodyRefusal(nest(100_000))?.code, "body_too_deep");
  const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, { v: `value ${i}` }]));
  assert.equal(bodyRefusal(wide), undefined);
});

/** The parts of a fuzz request: body, path parameters and query string, built with the generators. */
import fc from "fast-check";
import { deep, Generator, hostileValue, NASTY_STRINGS, type Operation } from "./generate.ts";
import type { Schema } from "./schema_check.ts";

const BODY_TEXTS = [
  "{",
  '{"a":',
  "nul",
  "[1,2",
  "'single'",
  "<xml/>",
  "a=b&c=d",
  "\u0000",
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  "null",
  "[]",
  "0",
  '"text"',
  "1e999",
  '{"a":1,"a":2}',
];

/** The properties of an object schema (after `$ref`s). */
function propertiesOf(gen: Generator, schema: Schema): [string, Schema][] {
  const resolved = typeof schema.$ref === "string" ? gen.resolve(schema.$ref) : schema;
  return Object.entries((resolved.properties ?? {}) as Record<string, Schema>);
}

/** A known-good example with up to two fields replaced (by fitting or hostile values) or dropped. */
function mutatedExample(gen: Generator, schema: Schema, bodies: Record<string, unknown>[]): fc.Arbitrary<string> {
  const properties = propertiesOf(gen, schema);
  type Change = { key: string; value?: unknown; drop?: boolean } | null;
  const change: fc.Arbitrary<Change> = properties.length === 0 ? fc.constant(null) : fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(...properties).chain(([key, sub]) =>
        gen.field(sub, key, 1, true).map((value): Change => ({ key, value }))
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(...properties).map(([key]): Change => ({ key, drop: true })) },
  );
  return fc.tuple(fc.constantFrom(...bodies), fc.array(change, { maxLength: 2 })).map(([example, changes]) => {
    const body: Record<string, unknown> = { ...example };
    for (const c of changes) {
      if (!c) continue;
      if (c.drop) delete body[c.key];
      else body[c.key] = c.value;
    }
    return JSON.stringify(body);
  });
}

/**
 * A request body: an example (maybe changed), JSON from the schema (clean, or with hostile fields),
 * and now and then not JSON at all, too large or absurdly nested.
 */
export function bodyText(
  clean: Generator,
  dirty: Generator,
  schema: Schema | undefined,
  bodies: Record<string, unknown>[],
): fc.Arbitrary<string | undefined> {
  const fromSchema = (gen: Generator) =>
    schema ? gen.valid(schema, "", 0, true).map((v) => JSON.stringify(v)) : fc.constant("{}");
  return fc.oneof(
    {
      weight: bodies.length > 0 && schema ? 30 : 0,
      // fast-check refuses an empty choice even at weight 0, so an operation without examples gets none.
      arbitrary: schema && bodies.length > 0 ? mutatedExample(dirty, schema, bodies) : fc.constant("{}"),
    },
    { weight: 15, arbitrary: fromSchema(clean) },
    { weight: 15, arbitrary: fromSchema(dirty) },
    { weight: 2, arbitrary: fc.constantFrom(...BODY_TEXTS) },
    { weight: 2, arbitrary: hostileValue().map((v) => JSON.stringify(v) ?? "null") },
    { weight: 1, arbitrary: fc.constantFrom(100_000).map((d) => deep(d, "array")) },
    { weight: 1, arbitrary: fc.constantFrom(10_000, 100_000).map((d) => deep(d, "object")) },
    { weight: 1, arbitrary: fc.constant(JSON.stringify({ blob: "z".repeat(1_100_000) })) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
  );
}

/** A path parameter's text: a reference (own or foreign), a fitting value or a hostile one, encoded or not. */
export function pathValue(gen: Generator, name: string, schema: Schema | undefined): fc.Arbitrary<[string, boolean]> {
  const foreign = [...gen.pools.foreign.ids, ...gen.pools.foreign.externalIds];
  const own = [...gen.pools.own.ids, ...gen.pools.own.externalIds];
  // A lone surrogate cannot be encoded: it goes as U+FFFD (as a browser would send it).
  const encode = (s: string) => encodeURIComponent(s.toWellFormed());
  const choices = Array.isArray(schema?.enum) ? (schema.enum as string[]) : [];
  return fc.oneof(
    {
      weight: choices.length > 0 ? 30 : 0,
      arbitrary: fc.constantFrom(...choices, "x").map((v) => [v, false] as [string, boolean]),
    },
    { weight: 6, arbitrary: fc.constantFrom(...own).map((v) => [encode(v), false] as [string, boolean]) },
    { weight: 6, arbitrary: fc.constantFrom(...foreign).map((v) => [encode(v), true] as [string, boolean]) },
    {
      weight: 3,
      arbitrary: gen.valid(schema ?? { type: "string" }, name, 1, false).map((v) =>
        [encode(String(v)), false] as [string, boolean]
      ),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...NASTY_STRINGS).map((v) => [encode(v) || "%20", false] as [string, boolean]),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("%", "%E0%A4%A", "%zz", "..", "a%2Fb", "%00", "%C0%AE").map((v) =>
        [v, false] as [string, boolean]
      ),
    },
  );
}

/** A query string for the operation's query parameters (each omitted, fitting or hostile), maybe with extras. */
export function queryString(gen: Generator, op: Operation): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === "query");
  const pair = (name: string, v: unknown) => `${encodeURIComponent(name)}=${encodeURIComponent(asText(v))}`;
  const clean = params.map((p) =>
    fc.oneof(
      { weight: 5, arbitrary: fc.constant<string[]>([]) },
      { weight: 4, arbitrary: gen.valid(p.schema ?? {}, p.name, 1, false).map((v) => [pair(p.name, v)]) },
    )
  );
  const dirty = params.map((p) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constant<string[]>([]) },
      { weight: 5, arbitrary: gen.valid(p.schema ?? {}, p.name, 1, false).map((v) => [pair(p.name, v)]) },
      { weight: 2, arbitrary: hostileValue().map((v) => [pair(p.name, v)]) },
      { weight: 1, arbitrary: fc.constant([`${p.name}=1`, `${p.name}=2`]) },
      { weight: 1, arbitrary: fc.constant([`${p.name}`]) },
    )
  );
  const extra = fc.oneof(
    { weight: 9, arbitrary: fc.constant<string[]>([]) },
    { weight: 1, arbitrary: fc.constantFrom(["unknown=1"], ["%zz=1"], ["a[b]=c"], ["limit=-1"]) },
  );
  return fc.tuple(fc.oneof(fc.tuple(...clean), fc.tuple(...dirty)), extra).map(([chosen, more]) => {
    const all = [...chosen.flat(), ...more];
    return all.length > 0 ? `?${all.join("&")}` : "";
  });
}

function asText(v: unknown): string {
  return (typeof v === "string" ? v : JSON.stringify(v) ?? "").toWellFormed();
}

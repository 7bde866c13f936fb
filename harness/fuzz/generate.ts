/**
 * Request generators for the fuzz test, built from the OpenAPI document: values that fit each
 * parameter and body schema (so that requests get past validation and reach the handlers), mixed
 * with hostile ones (wrong types, boundaries, huge and unicode strings, deep nesting, non-JSON).
 */
import fc from "fast-check";
import type { RefResolver, Schema } from "./schema_check.ts";

/** Values the generators draw references from. `own` are team B's; `foreign` team A's (the isolation check). */
export interface Pools {
  own: RefPool;
  foreign: RefPool;
  /** Tags, emails and template keys any field of that name may take. */
  tags: string[];
  emails: string[];
  templateKeys: string[];
}

/** Identifiers of one team's resources. */
export interface RefPool {
  ids: string[];
  externalIds: string[];
  tokens: string[];
  workflowNames: string[];
  templateKeys: string[];
}

/** One generated request. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Path parameters naming one of team A's resources (`name=value`). */
  foreignPath: string[];
  /** Top-level body fields holding one of team A's references. */
  foreignFields: string[];
}

/** An operation of the document. */
export interface Operation {
  method: string;
  path: string;
  parameters: { name: string; in: string; required?: boolean; schema?: Schema }[];
  body?: Schema;
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

const OMIT = Symbol("omit");
type Maybe<T> = T | typeof OMIT;

const HUGE = "x".repeat(70_000);
/** Strings that break careless code: control characters, injections, odd dates and ids, huge and unicode text. */
export const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "\u202e\u0000\uffff",
  "null",
  "undefined",
  "NaN",
  "-1",
  "1e309",
  "0x10",
  "true",
  "[]",
  "{}",
  "<script>alert(1)</script>",
  "'; drop table contacts; --",
  "../../../etc/passwd",
  "%00%ff%",
  "{{constructor.constructor('return 1')()}}",
  "__proto__",
  "😀".repeat(300),
  "\ud800",
  "a".repeat(256),
  "2026-13-45T99:99:99Z",
  "+275760-09-13T00:00:00.000Z",
  "1970-01-01T00:00:00Z",
  "00000000-0000-0000-0000-000000000000",
  "not-a-uuid",
  "+1",
  "+999999999999999999",
  "user@",
  "@example.com",
  "a@b",
  "sk_live_0000",
];

const NASTY_NUMBERS = [0, -1, -0, 1.5, 2 ** 31, -(2 ** 31), 2 ** 53 + 2, 1e308, -1e308, Number.MIN_VALUE, 1e-7];

/** A deeply nested JSON text (arrays or objects). */
export function deep(depth: number, kind: "array" | "object"): string {
  return kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

/** A value of any wrong shape. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom<unknown>(null, true, false, ...NASTY_NUMBERS, ...NASTY_STRINGS),
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.constant(HUGE),
    fc.array(fc.constantFrom<unknown>(null, 1, "x", {}, []), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom("a", "__proto__", "constructor", "toString", ""), fc.constantFrom<unknown>(1, "x")),
    fc.constantFrom(20, 200, 2_000).map((d) => JSON.parse(deep(d, "array"))),
    fc.constantFrom(20, 200, 2_000).map((d) => JSON.parse(deep(d, "object"))),
  );
}

/** Generators over the document's schemas, drawing references from the pools. */
export class Generator {
  /** `hostile`: how often (in twelfths) a field takes a hostile value; 0 for requests meant to pass validation. */
  constructor(readonly resolve: RefResolver, readonly pools: Pools, readonly hostile = 2) {}

  /** A value for a field named `name` (top-level reference fields may take team A's references). */
  field(schema: Schema | undefined, name: string, depth: number, foreign: boolean): fc.Arbitrary<unknown> {
    const valid = this.valid(schema ?? {}, name, depth, foreign);
    if (this.hostile === 0) return valid;
    return fc.oneof(
      { weight: 12 - this.hostile, arbitrary: valid },
      { weight: this.hostile, arbitrary: hostileValue() },
    );
  }

  /** A value that fits `schema` (mostly), by the field's name where the name says more than the type. */
  valid(schema: Schema, name: string, depth: number, foreign: boolean): fc.Arbitrary<unknown> {
    if (typeof schema.$ref === "string") return this.valid(this.resolve(schema.$ref), name, depth, foreign);
    if (Array.isArray(schema.anyOf)) {
      return fc.oneof(...(schema.anyOf as Schema[]).map((s) => this.valid(s, name, depth, foreign)));
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
      return this.valid(schema.allOf[0] as Schema, name, depth, foreign);
    }
    if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum as unknown[]);
    const types = Array.isArray(schema.type) ? (schema.type as string[]).filter((t) => t !== "null") : [schema.type];
    const type = types[0] as string | undefined;
    switch (type) {
      case "string":
        return this.string(schema, name, foreign);
      case "integer":
      case "number":
        return this.number(schema, type === "integer");
      case "boolean":
        return fc.boolean();
      case "array": {
        const items = (schema.items ?? {}) as Schema;
        const min = typeof schema.minItems === "number" ? schema.minItems : 0;
        const max = Math.min(typeof schema.maxItems === "number" ? schema.maxItems : 4, min + 4);
        if (depth > 5) return fc.constant([]);
        return fc.array(this.field(items, name, depth + 1, false), { minLength: min, maxLength: max });
      }
      case "object":
        return depth > 5 ? fc.constant({}) : this.object(schema, depth + 1, false);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  /** An object: required fields mostly present, optional ones sometimes, now and then an unknown key. */
  object(schema: Schema, depth: number, topLevel: boolean): fc.Arbitrary<Record<string, unknown>> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    const entries = Object.entries(properties).map(([key, sub]) =>
      fc.oneof(
        { weight: required.has(key) ? 1 : 6, arbitrary: fc.constant<Maybe<unknown>>(OMIT) },
        { weight: required.has(key) ? 19 : 6, arbitrary: this.field(sub, key, depth, topLevel) },
      ).map((v) => [key, v] as const)
    );
    const extras = schema.additionalProperties && typeof schema.additionalProperties === "object"
      ? fc.dictionary(
        fc.string({ minLength: 1, maxLength: 8 }),
        this.field(schema.additionalProperties as Schema, "x", depth, false),
        {
          maxKeys: 3,
        },
      )
      : fc.constant({});
    const unknown = fc.oneof(
      { weight: 9, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: fc.record({ unexpected_field: hostileValue() }) },
    );
    return fc.tuple(fc.tuple(...entries), extras, unknown).map(([fields, more, odd]) => {
      const out: Record<string, unknown> = { ...more, ...odd };
      for (const [key, value] of fields) if (value !== OMIT) out[key] = value;
      return out;
    });
  }

  string(schema: Schema, name: string, foreign: boolean): fc.Arbitrary<string> {
    const refs = (pick: (p: RefPool) => string[]) => {
      const values = [...pick(this.pools.own), ...(foreign ? pick(this.pools.foreign) : [])];
      return values.length > 0 ? fc.constantFrom(...values) : fc.uuid();
    };
    const lower = name.toLowerCase();
    if (lower === "session_token" || lower === "token") return refs((p) => p.tokens);
    if (lower === "workflow_name") return refs((p) => p.workflowNames);
    if (lower === "contact_external_id") return refs((p) => p.externalIds);
    if (lower === "template_key" || lower === "template_id") {
      return fc.oneof(refs((p) => p.templateKeys), refs((p) => p.ids), fc.constantFrom(...this.pools.templateKeys));
    }
    // A new external id never takes a reference: team B must not hold one of team A's ids as its own.
    if (lower === "external_id") {
      return fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.uuid().map((u) => `fz-${u}`));
    }
    if (/(^|_)ids?$/.test(lower) || schema.format === "uuid") {
      return fc.oneof({ weight: 4, arbitrary: refs((p) => p.ids) }, { weight: 1, arbitrary: fc.uuid() });
    }
    if (schema.format === "email" || /email/.test(lower)) {
      return fc.oneof(fc.constantFrom(...this.pools.emails), fc.uuid().map((u) => `fz.${u.slice(0, 8)}@example.com`));
    }
    if (/phone|direct_sms|direct_whatsapp|^sms$|^whatsapp$/.test(lower)) {
      return fc.integer({ min: 2_000_000, max: 9_999_999 }).map((n) => `+4477009${n}`);
    }
    if (/(_at|after|before|triggerat)$/.test(lower)) {
      return fc.oneof(
        fc.integer({ min: -86_400_000, max: 30 * 86_400_000 }).map((ms) => new Date(Date.now() + ms).toISOString()),
        fc.constantFrom("2030-01-01T00:00:00Z", "2020-01-01T00:00:00.000Z", "yesterday"),
      );
    }
    if (lower === "url" || lower === "image_url" || lower === "click_action") {
      return fc.constantFrom(
        "https://93.184.216.34/hook",
        "http://127.0.0.1:1/x",
        "https://fuzz-nowhere.invalid/x",
        "ftp://example.com/",
        "javascript:alert(1)",
      );
    }
    if (lower === "tag" || lower === "tags") return fc.constantFrom(...this.pools.tags);
    const min = typeof schema.minLength === "number" ? schema.minLength : 0;
    const max = Math.min(typeof schema.maxLength === "number" ? schema.maxLength : 30, Math.max(min, 30));
    return fc.oneof(
      { weight: 6, arbitrary: fc.string({ minLength: min, maxLength: max }) },
      { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: min, maxLength: max }) },
      ...(typeof schema.maxLength === "number"
        ? [{ weight: 1, arbitrary: fc.constantFrom("y".repeat(schema.maxLength), "y".repeat(schema.maxLength + 1)) }]
        : []),
    );
  }

  number(schema: Schema, integer: boolean): fc.Arbitrary<number> {
    const min = typeof schema.minimum === "number"
      ? schema.minimum
      : typeof schema.exclusiveMinimum === "number"
      ? schema.exclusiveMinimum + (integer ? 1 : 0.001)
      : -1_000;
    const max = typeof schema.maximum === "number" ? schema.maximum : 1_000_000;
    const inner = integer
      ? fc.integer({ min: Math.ceil(min), max: Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER) })
      : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    return fc.oneof(
      { weight: 6, arbitrary: inner },
      { weight: 1, arbitrary: fc.constantFrom(min, max, min - 1, max + 1) },
    );
  }
}

/**
 * A small JSON Schema checker for the subset our OpenAPI document uses (type, properties, required,
 * additionalProperties, items, enum, anyOf, allOf, string and number bounds, array sizes, pattern,
 * the date-time, email and uuid formats, and local `$ref`s), to check answers against the document.
 */

/** A JSON Schema object (the subset above). */
export type Schema = Record<string, unknown>;

/** Resolves `#/components/schemas/Name` references against the document. */
export type RefResolver = (ref: string) => Schema;

/** A resolver over an OpenAPI document. */
export function documentResolver(doc: { components?: { schemas?: Record<string, Schema> } }): RefResolver {
  return (ref) => {
    const name = ref.replace(/^#\/components\/schemas\//, "");
    const schema = doc.components?.schemas?.[name];
    if (!schema) throw new Error(`Cannot resolve ${ref}: no such schema`);
    return schema;
  };
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function typeMatches(expected: string, actual: string): boolean {
  return expected === actual || (expected === "number" && actual === "integer");
}

/**
 * The problems of `value` against `schema`, each as '<path>: <what>' (empty when it conforms).
 * Stops at `limit` problems.
 */
export function checkSchema(schema: Schema, value: unknown, resolve: RefResolver, path = "$", limit = 10): string[] {
  const out: string[] = [];
  check(schema, value, resolve, path, out, limit);
  return out;
}

function check(schema: Schema, value: unknown, resolve: RefResolver, path: string, out: string[], limit: number) {
  if (out.length >= limit) return;
  if (typeof schema.$ref === "string") return check(resolve(schema.$ref), value, resolve, path, out, limit);
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf as Schema[]) check(part, value, resolve, path, out, limit);
  }
  if (Array.isArray(schema.anyOf)) {
    const fits = (schema.anyOf as Schema[]).some((part) => checkSchema(part, value, resolve, path, 1).length === 0);
    if (!fits) out.push(`${path}: matches none of anyOf (${JSON.stringify(value)?.slice(0, 80)})`);
  }
  const actual = typeOf(value);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type as string[] : [schema.type as string];
    if (!types.some((t) => typeMatches(t, actual))) {
      out.push(`${path}: expected ${types.join(" or ")}, got ${actual}`);
      return;
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) {
    out.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof value === "string") checkString(schema, value, path, out);
  if (typeof value === "number") checkNumber(schema, value, path, out);
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      out.push(`${path}: fewer than ${schema.minItems} items`);
    }
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
      out.push(`${path}: more than ${schema.maxItems} items`);
    }
    if (schema.items && typeof schema.items === "object") {
      value.forEach((item, i) => check(schema.items as Schema, item, resolve, `${path}[${i}]`, out, limit));
    }
  }
  if (actual === "object") checkObject(schema, value as Record<string, unknown>, resolve, path, out, limit);
}

function checkString(schema: Schema, value: string, path: string, out: string[]) {
  const length = [...value].length;
  if (typeof schema.minLength === "number" && length < schema.minLength) {
    out.push(`${path}: shorter than ${schema.minLength}`);
  }
  if (typeof schema.maxLength === "number" && length > schema.maxLength) {
    out.push(`${path}: longer than ${schema.maxLength}`);
  }
  if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
    out.push(`${path}: does not match ${schema.pattern}`);
  }
  const format = schema.format;
  if (format === "date-time" && !(ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)))) {
    out.push(`${path}: not a date-time: ${JSON.stringify(value)}`);
  }
  if (format === "email" && !EMAIL.test(value)) out.push(`${path}: not an email: ${JSON.stringify(value)}`);
  if (format === "uuid" && !UUID.test(value)) out.push(`${path}: not a uuid: ${JSON.stringify(value)}`);
}

function checkNumber(schema: Schema, value: number, path: string, out: string[]) {
  if (typeof schema.minimum === "number" && value < schema.minimum) out.push(`${path}: below ${schema.minimum}`);
  if (typeof schema.maximum === "number" && value > schema.maximum) out.push(`${path}: above ${schema.maximum}`);
  if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
    out.push(`${path}: not above ${schema.exclusiveMinimum}`);
  }
}

function checkObject(
  schema: Schema,
  value: Record<string, unknown>,
  resolve: RefResolver,
  path: string,
  out: string[],
  limit: number,
) {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  for (const name of (schema.required ?? []) as string[]) {
    if (!(name in value)) out.push(`${path}: missing required ${name}`);
  }
  for (const [name, item] of Object.entries(value)) {
    const sub = properties[name];
    if (sub) {
      check(sub, item, resolve, `${path}.${name}`, out, limit);
    } else if (schema.additionalProperties === false) {
      out.push(`${path}: unexpected property ${name}`);
    } else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      check(schema.additionalProperties as Schema, item, resolve, `${path}.${name}`, out, limit);
    }
  }
}

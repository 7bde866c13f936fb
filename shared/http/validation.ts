import type { z } from "zod";
import { ValidationError } from "../errors.ts";

interface SpecMessage {
  field: string;
  code: string;
}

const specMessages = new Map<string, SpecMessage>();

/**
 * Declares a validation message that the specification gives word for word, with its
 * `details: {field, code}`. Use the returned string as the zod `error` of the schema part; a
 * failing request then answers this one message (not the usual array) with those details.
 */
export function specMessage(message: string, field: string, code: string): string {
  specMessages.set(message, { field, code });
  return message;
}

/**
 * The answer to text Postgres cannot store, whether validation finds it or the database does
 * (see knownError in app.ts): 400 with code `invalid_characters`.
 */
export const UNSTORABLE_TEXT = "Text must not contain NUL (U+0000) characters or unpaired surrogates";

/** True for text Postgres can store: no U+0000 (refused in text and jsonb), no unpaired surrogate (refused in jsonb). */
export function isStorableText(text: string): boolean {
  return !text.includes("\u0000") && text.isWellFormed();
}

/**
 * The answer to an object key `__proto__` in a body (400 `invalid_key`). JSON.parse keeps it as a key
 * of its own, but copying the object (zod's record output, `Object.assign`) turns it into the
 * object's prototype, so it vanished from custom fields, variables and metadata without a word.
 */
export const PROTO_KEY = 'Object keys must not be "__proto__"';

/**
 * protoKeyRefusal of a body's JSON text, parsed again only when it can hold such a key: it spells
 * `__proto__` out, or it has a `\u` escape (`"\u005f_proto__"` parses to the same key; no other
 * escape yields a letter or `_`). Nearly every body has neither, and is not parsed a second time.
 */
export function protoKeyRefusalOfText(text: string): ValidationError | undefined {
  if (!text.includes("__proto__") && !text.includes("\\u")) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  return protoKeyRefusal(body);
}

/**
 * 400 PROTO_KEY (`invalid_key`) when `body` (as parsed, before validation: validation is what drops
 * the key) has an object key `__proto__` at any depth, else undefined. Its own walk, with its own stack:
 * bodyRefusal walks the validated body, which no longer has it.
 */
export function protoKeyRefusal(body: unknown): ValidationError | undefined {
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    if (Object.hasOwn(v, "__proto__")) return new ValidationError(PROTO_KEY, "invalid_key");
    for (const key in v) stack.push((v as Record<string, unknown>)[key]);
  }
  return undefined;
}

/**
 * How deep a request body may nest (objects and arrays). Far beyond any body of the interface, and
 * far below what breaks Postgres: a jsonb value some thousands of levels deep exceeds its stack
 * depth, and the embedded Postgres does not recover from that.
 */
export const MAX_BODY_DEPTH = 32;

/** The answer to a body nested deeper than MAX_BODY_DEPTH. */
export const TOO_DEEP = `Request body must not be nested more than ${MAX_BODY_DEPTH} levels deep`;

/**
 * Why a validated JSON body cannot be taken as it is, or undefined: nested over MAX_BODY_DEPTH
 * (400 `body_too_deep`), or holding a string Postgres cannot store, as a value or a key at any depth
 * (400 UNSTORABLE_TEXT, `invalid_characters`: NUL is refused in text and jsonb, and an unpaired
 * surrogate became U+FFFD in a text column, so two different ids met as one). One walk, with its own
 * stack, over every route's body.
 */
export function bodyRefusal(value: unknown): ValidationError | undefined {
  // Values and their depths side by side, and own keys without Object.entries: no allocation a node
  // (it runs on every send).
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (typeof v === "string") {
      if (!isStorableText(v)) return new ValidationError(UNSTORABLE_TEXT, "invalid_characters");
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= MAX_BODY_DEPTH) return new ValidationError(TOO_DEEP, "body_too_deep");
    if (Array.isArray(v)) {
      for (const item of v) {
        values.push(item);
        depths.push(depth + 1);
      }
      continue;
    }
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      if (!isStorableText(key)) return new ValidationError(UNSTORABLE_TEXT, "invalid_characters");
      values.push((v as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return undefined;
}

const DEFAULT_PREFIXES = ["Invalid ", "Too ", "Unrecognized ", "Expected "];

function fieldName(path: PropertyKey[]): string {
  return path.length === 0 ? "body" : path.map(String).join(".");
}

/** What a message calls zod's expected types where its own name is not plain English. */
const TYPE_NAMES: Record<string, string> = { int: "integer", record: "object" };

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** The value at `path` in the validated input (zod 4 issues do not carry it). */
function valueAt(data: unknown, path: PropertyKey[]): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * One readable line for a zod issue: '<field> should not be empty', '<field> must be a string' …
 * `data` is the input that was validated, to tell a missing field from a wrong one.
 */
export function describeIssue(issue: z.core.$ZodIssue, data?: unknown): string {
  const field = fieldName(issue.path);
  if (!DEFAULT_PREFIXES.some((p) => issue.message.startsWith(p))) return issue.message;
  const missing = valueAt(data, issue.path) === undefined;
  switch (issue.code) {
    case "invalid_type":
      if (missing) return `${field} should not be empty`;
      return `${field} must be ${article(TYPE_NAMES[issue.expected] ?? issue.expected)}`;
    case "invalid_value":
      if (missing && issue.values.length > 1) return `${field} should not be empty`;
      return `${field} must be one of: ${issue.values.map(String).join(", ")}`;
    case "too_small":
      if (issue.origin === "string") {
        return Number(issue.minimum) <= 1
          ? `${field} should not be empty`
          : `${field} must be at least ${issue.minimum} characters`;
      }
      if (issue.origin === "array" || issue.origin === "set") {
        return `${field} must contain at least ${issue.minimum} elements`;
      }
      if (issue.inclusive === false) {
        return Number(issue.minimum) === 0
          ? `${field} must be a positive number`
          : `${field} must be greater than ${issue.minimum}`;
      }
      return `${field} must not be less than ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "string") return `${field} must be at most ${issue.maximum} characters`;
      if (issue.origin === "array" || issue.origin === "set") {
        return `${field} must contain at most ${issue.maximum} elements`;
      }
      if (issue.inclusive === false) return `${field} must be less than ${issue.maximum}`;
      return `${field} must not be greater than ${issue.maximum}`;
    case "invalid_format":
      if (issue.format === "email") return `${field} must be an email`;
      if (issue.format === "uuid") return `${field} must be a UUID`;
      if (issue.format === "datetime") return `${field} must be an ISO 8601 date string`;
      return `${field} must match the ${issue.format} format`;
    case "invalid_union": {
      // The option the value had the type of tells what is wrong with it (a list of 101 tags where a
      // string or a list of at most 100 is taken: "at most 100 elements", not "invalid").
      const fitting = issue.errors.find((option) =>
        !option.some((i) => i.code === "invalid_type" && i.path.length === 0)
      );
      const inner = fitting?.[0];
      if (!inner) return `${field} is invalid`;
      return describeIssue({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue, data);
    }
    case "unrecognized_keys":
      return `${field} has unknown properties: ${issue.keys.join(", ")}`;
    default:
      return `${field} is invalid`;
  }
}

/**
 * Turns zod issues into our 400: a spec message with details, the unstorable-text answer, or an
 * array of lines.
 */
export function validationError(error: z.core.$ZodError, data?: unknown): ValidationError {
  for (const issue of error.issues) {
    const spec = specMessages.get(issue.message);
    if (spec) {
      return new ValidationError(issue.message, spec.code === "required" ? "missing_field" : spec.code, {
        details: spec,
      });
    }
  }
  // A value of the wrong type is reported as such, not also for its size (zod 4 runs an array's
  // `.max()` on a string given in its place).
  const wrongType = new Set(error.issues.filter((i) => i.code === "invalid_type").map((i) => fieldName(i.path)));
  const issues = error.issues.filter((i) =>
    !((i.code === "too_big" || i.code === "too_small") && wrongType.has(fieldName(i.path)))
  );
  const lines = [...new Set(issues.map((issue) => describeIssue(issue, data)))];
  return new ValidationError(lines);
}

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

const DEFAULT_PREFIXES = ["Invalid ", "Too ", "Unrecognized ", "Expected "];

function fieldName(path: PropertyKey[]): string {
  return path.length === 0 ? "body" : path.map(String).join(".");
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** One readable line for a zod issue: '<field> should not be empty', '<field> must be a string' … */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const field = fieldName(issue.path);
  const custom = !DEFAULT_PREFIXES.some((p) => issue.message.startsWith(p));
  if (custom && issue.code !== "invalid_type") return issue.message;
  switch (issue.code) {
    case "invalid_type":
      if (custom) return issue.message;
      if ((issue as { input?: unknown }).input === undefined) return `${field} should not be empty`;
      return `${field} must be ${article(issue.expected === "int" ? "integer" : issue.expected)}`;
    case "invalid_value":
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
      return `${field} must not be less than ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "string") return `${field} must be at most ${issue.maximum} characters`;
      if (issue.origin === "array" || issue.origin === "set") {
        return `${field} must contain at most ${issue.maximum} elements`;
      }
      return `${field} must not be greater than ${issue.maximum}`;
    case "invalid_format":
      if (issue.format === "email") return `${field} must be an email`;
      if (issue.format === "uuid") return `${field} must be a UUID`;
      if (issue.format === "datetime") return `${field} must be an ISO 8601 date string`;
      return `${field} must match the ${issue.format} format`;
    case "unrecognized_keys":
      return `${field} has unknown properties: ${issue.keys.join(", ")}`;
    default:
      return `${field} is invalid`;
  }
}

/** Turns zod issues into our 400: a spec message with details, or an array of lines. */
export function validationError(error: z.core.$ZodError): ValidationError {
  for (const issue of error.issues) {
    const spec = specMessages.get(issue.message);
    if (spec) {
      return new ValidationError(issue.message, spec.code === "required" ? "missing_field" : spec.code, {
        details: spec,
      });
    }
  }
  const lines = [...new Set(error.issues.map(describeIssue))];
  return new ValidationError(lines);
}

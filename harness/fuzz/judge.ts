/** What the fuzz test asserts of each answer. */
import type { FuzzRequest, Operation } from "./generate.ts";
import { checkSchema, type RefResolver } from "./schema_check.ts";

/** An answer as the fuzz test reads it. */
export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** Answer fields whose value is an id: none may be one of team A's in an answer to team B. */
const ID_KEYS = new Set(["id", "contact_id", "trigger_id", "workflow_id", "execution_id", "team_id", "message_id"]);

/** Team A's data as the leak checks look for it. */
export interface Foreign {
  /** Strings only team A's data holds (emails, names, template text …). */
  markers: string[];
  /** Team A's ids (contacts, workflows, triggers, executions, webhooks, the team). */
  ids: Set<string>;
}

/** Judges answers against the document and the isolation of team A. */
export class Judge {
  constructor(readonly resolve: RefResolver, readonly foreign: Foreign) {}

  /** What is wrong with an answer (empty when nothing is). */
  problems(op: Operation, req: FuzzRequest, res: Answer): string[] {
    const problems: string[] = [];
    const body = parse(res.text) as Record<string, unknown> | undefined;
    if (res.status >= 500) {
      problems.push(`${res.status} ${res.text.slice(0, 160)}`);
    } else if (res.status >= 400) {
      if (!res.contentType.includes("application/json") || !body || typeof body !== "object") {
        problems.push(`${res.status} is not a JSON error: ${res.contentType} ${res.text.slice(0, 100)}`);
      } else if (!isShapeA(body, res.status) && !isShapeB(body, res.status)) {
        problems.push(`${res.status} is neither Shape A nor Shape B: ${res.text.slice(0, 160)}`);
      }
    } else if (res.status >= 200 && res.status < 300) {
      problems.push(...this.#success(op, res, body));
    }
    if (!op.path.startsWith("/admin/")) problems.push(...this.#leaks(req, res, body));
    return problems;
  }

  /** A 2xx must be declared and match its schema. */
  #success(op: Operation, res: Answer, body: unknown): string[] {
    const declared = op.responses[String(res.status)];
    if (!declared) return [`${res.status} is not declared (declared: ${Object.keys(op.responses).join(", ")})`];
    const schema = declared.content?.["application/json"]?.schema;
    if (!schema) return [];
    if (body === undefined) return [`${res.status} body is not JSON: ${res.text.slice(0, 100)}`];
    const issues = checkSchema(schema, body, this.resolve, "$", 3);
    return issues.length > 0 ? [`${res.status} does not match its schema: ${issues.join("; ")}`] : [];
  }

  /** Team B never gets a 2xx for a path naming team A's resource, nor an answer carrying A's data or ids. */
  #leaks(req: FuzzRequest, res: Answer, body: unknown): string[] {
    const out: string[] = [];
    if (res.status >= 200 && res.status < 300 && req.foreignPath.length > 0) {
      out.push(`LEAK: ${res.status} for team B naming team A's ${req.foreignPath.join(", ")}`);
    }
    const seen = this.foreign.markers.filter((m) => res.text.includes(m));
    if (seen.length > 0) out.push(`LEAK: the answer carries team A's data (${seen.join(", ")})`);
    const ids = body ? this.#foreignIdsIn(body) : [];
    if (ids.length > 0) out.push(`LEAK: the answer carries team A's ids ${ids.join(", ")}`);
    return out;
  }

  #foreignIdsIn(value: unknown, out: string[] = [], depth = 0): string[] {
    if (depth > 20 || value === null || typeof value !== "object") return out;
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      if (ID_KEYS.has(key) && typeof v === "string" && this.foreign.ids.has(v)) out.push(`${key}=${v}`);
      else this.#foreignIdsIn(v, out, depth + 1);
    }
    return out;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Shape A: `{statusCode, message (string or strings), error, code}`. */
export function isShapeA(body: Record<string, unknown>, status: number): boolean {
  const message = body.message;
  const messageOk = typeof message === "string" ||
    (Array.isArray(message) && message.length > 0 && message.every((m) => typeof m === "string"));
  return body.statusCode === status && messageOk && typeof body.error === "string" && typeof body.code === "string";
}

/** Shape B (authentication): `{error: {type, message}}` on a 401. */
export function isShapeB(body: Record<string, unknown>, status: number): boolean {
  const error = body.error as Record<string, unknown> | undefined;
  return status === 401 && !!error && typeof error === "object" && typeof error.type === "string" &&
    typeof error.message === "string";
}

/** A request in one line for a failure report (long bodies and headers cut). */
export function describeRequest(req: FuzzRequest): string {
  const body = req.body === undefined
    ? ""
    : ` body=${req.body.length > 300 ? `${req.body.slice(0, 300)}…(${req.body.length})` : req.body}`;
  const headers = Object.entries(req.headers).map(([k, v]) => `${k}: ${v.length > 60 ? `${v.slice(0, 60)}…` : v}`);
  return `${req.method} ${req.path.slice(0, 300)} [${headers.join(", ")}]${body}`;
}

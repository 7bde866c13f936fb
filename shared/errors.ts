/** Reason phrases for the status codes we answer with. */
const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The reason phrase of an HTTP status. */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? "Error";
}

/** Extra fields an error carries into its body (`details`, `attempts_remaining` …). */
export type ErrorExtra = Record<string, unknown>;

/**
 * An error that is part of the interface: it carries the status, the specification's message,
 * a stable snake_case `code`, and optional extra body fields. One `onError` renders it as Shape A.
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: ErrorExtra;
  readonly headers: Record<string, string>;
  /** The message as sent: validation errors send an array of strings. */
  readonly body: string | string[];

  constructor(
    status: number,
    code: string,
    message: string | string[],
    options: { extra?: ErrorExtra; headers?: Record<string, string> } = {},
  ) {
    super(Array.isArray(message) ? message.join("; ") : message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.body = message;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }
}

/** 400: the request is invalid. */
export class ValidationError extends AppError {
  constructor(message: string | string[], code = "validation_error", extra?: ErrorExtra) {
    super(400, code, message, { extra });
  }
}

/** 401 for a bad team context (Shape A; a bad key is AuthenticationError). */
export class UnauthorizedError extends AppError {
  constructor(message: string, code = "unauthorized", extra?: ErrorExtra) {
    super(401, code, message, { extra });
  }
}

/**
 * 401 Shape B: missing or unknown API key. `hint` says what to do (it names the header); it goes
 * beside the message, which stays the one clients know.
 */
export class AuthenticationError extends AppError {
  constructor(message: "Invalid API key" | "Missing API key", hint?: string) {
    super(401, "authentication_error", message, { extra: hint === undefined ? {} : { hint } });
  }
}

/** 402: the wallet cannot pay. */
export class PaymentError extends AppError {
  constructor(message: string, extra?: ErrorExtra) {
    super(402, "insufficient_balance", message, { extra });
  }
}

/** 403: the key may not do this. */
export class ForbiddenError extends AppError {
  constructor(message = "Insufficient permissions", code = "insufficient_permissions") {
    super(403, code, message);
  }
}

/** 404: the thing named does not exist (for this team). */
export class NotFoundError extends AppError {
  constructor(message: string, code = "not_found") {
    super(404, code, message);
  }
}

/** 409: a duplicate, or a request already in flight. */
export class ConflictError extends AppError {
  constructor(message: string, code = "conflict") {
    super(409, code, message);
  }
}

/** 429: a limit was reached; `retryAfter` is in seconds. */
export class RateLimitError extends AppError {
  constructor(message: string, retryAfter: number, code = "rate_limit_exceeded") {
    super(429, code, message, { headers: { "Retry-After": String(Math.max(1, Math.ceil(retryAfter))) } });
  }
}

/** Shape A body of an AppError. */
export function shapeA(err: AppError): Record<string, unknown> {
  return {
    statusCode: err.status,
    message: err.body,
    error: reasonPhrase(err.status),
    code: err.code,
    ...err.extra,
  };
}

/**
 * Shape B body (authentication), with Shape A's top-level fields so either reader finds the message;
 * a hint is both on top and as the error's `details` (Shape B's own place for more).
 */
export function shapeB(err: AppError): Record<string, unknown> {
  const hint = err.extra.hint;
  return {
    statusCode: err.status,
    message: err.body,
    error: { type: err.code, message: err.body, ...(hint === undefined ? {} : { details: hint }) },
    ...(hint === undefined ? {} : { hint }),
  };
}

/**
 * True when Postgres refused the data of a statement (SQLSTATE class 22, data exception; 23,
 * integrity constraint; 54, program limit exceeded, e.g. an index row over 2,704 bytes): the same
 * statement fails again on retry, unlike a lost connection or a shutdown.
 */
export function isDataRefusal(err: unknown): boolean {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" && /^(22|23|54)/.test(code);
}

/** True when a Postgres error is a unique violation (SQLSTATE 23505). */
export function isUniqueViolation(err: unknown): err is { code: string; constraint_name?: string } {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === "23505";
}

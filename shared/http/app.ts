import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError, reasonPhrase, shapeA, shapeB } from "../errors.ts";
import { log, logs } from "../log.ts";
import { recordRequest } from "../metrics.ts";
import { allowedMethods } from "./allowed_methods.ts";
import type { AppEnv } from "./env.ts";
import { bodyRefusal, protoKeyRefusalOfText, UNSTORABLE_TEXT, validationError } from "./validation.ts";

/** Largest request body accepted (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A router whose validation failures become our 400 (every sub-app is made with this). */
export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: async (result, c) => {
      if (!result.success) throw validationError(result.error, (result as { data?: unknown }).data);
      if (result.target !== "json") return;
      // The body's text (Hono keeps it): the validated body has lost any `__proto__` key. A body the
      // validator did not read (none, on a route where it is optional) has nothing to check.
      const text = await c.req.text().catch(() => "");
      const refusal = protoKeyRefusalOfText(text) ?? bodyRefusal(result.data);
      if (refusal) throw refusal;
    },
  });
}

/** What an error is answered with: status, body (Shape A / Shape B) and the error's own headers. */
interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * The answer to any thrown error (see errorResponse), without a Hono context. `fields` are added to
 * the body unless the error sets them.
 */
function errorAnswer(err: Error, requestId: string | undefined, fields?: Record<string, unknown>): ErrorAnswer {
  const known = knownError(err, requestId);
  const body = known.status === 401 && known.code === "authentication_error" ? shapeB(known) : shapeA(known);
  for (const [name, value] of Object.entries(fields ?? {})) if (!(name in body)) body[name] = value;
  return { status: known.status, body, headers: known.headers };
}

/** Renders any thrown error as Shape A / Shape B; unexpected ones are logged and become a 500. */
function errorResponse(err: Error, c: Context<AppEnv>): Response {
  const answer = errorAnswer(err, c.get("requestId"), c.get("errorFields"));
  for (const [name, value] of Object.entries(answer.headers)) c.header(name, value);
  return c.json(answer.body, answer.status as 400);
}

/** Any thrown error as an AppError: Hono's own, unstorable text, else a logged 500. */
function knownError(err: Error, requestId: string | undefined): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HTTPException) {
    const status = err.status;
    if (status === 415) {
      // The route validator's answer to a body not declared as JSON (curl -d sends a form type).
      return new AppError(415, "unsupported_media_type", "Content-Type must be application/json");
    }
    const message = status === 400 && /json/i.test(err.message)
      ? "Invalid JSON body"
      : err.message || reasonPhrase(status);
    const code = status === 413 ? "payload_too_large" : status === 400 ? "invalid_request" : "http_error";
    return new AppError(status, code, message);
  }
  if (isUnstorableText(err)) return new AppError(400, "invalid_characters", UNSTORABLE_TEXT);
  log("error", "unhandled error", { request_id: requestId, error: String(err), stack: err.stack });
  return new AppError(500, "internal_error", "Internal server error", { extra: { request_id: requestId } });
}

/**
 * Postgres refuses U+0000 in text (22021) and in jsonb (22P05), and an unpaired surrogate (`\ud800`)
 * in jsonb (22P02 on type json). Such a value can only come from the request (a path, query or body
 * string), so it is a bad request, not a 500. Send bodies refuse such text as they are validated
 * (`bodyRefusal` in validation.ts), with the same answer.
 */
function isUnstorableText(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  return code === "22P05" || (code === "22021" && err.message.includes("0x00")) ||
    (code === "22P02" && err.message.includes("type json"));
}

/**
 * The route pattern a request matched (`/api/v1/sms/send`), also when a middleware answered it first
 * (a 401, an idempotent replay): Hono's routePath is then the middleware's own (`/api/v1/*`).
 */
function routeOf(c: Context<AppEnv>): string {
  const routes = c.req.matchedRoutes;
  for (let i = routes.length - 1; i >= 0; i--) {
    if (routes[i].method !== "ALL" && !routes[i].path.endsWith("*")) return routes[i].path;
  }
  return c.req.routePath;
}

/** What is counted and logged of every answered request. */
interface RequestDone {
  requestId: string;
  teamId: string | undefined;
  method: string;
  /** The route pattern (`/api/v1/sms/send`), the metrics' label. */
  route: string;
  path: string;
  status: number;
  /** performance.now() when the request came in. */
  started: number;
}

/** Counts an answered request in the metrics and writes its access log line (level info). */
function requestDone(done: RequestDone): void {
  const durationMs = performance.now() - done.started;
  recordRequest(done.method, done.route, done.status, durationMs);
  if (!logs("info")) return;
  log("info", "request", {
    request_id: done.requestId,
    team_id: done.teamId,
    method: done.method,
    route: done.route,
    path: done.path,
    status: done.status,
    duration_ms: Math.round(durationMs * 100) / 100,
  });
}

/** The root app: request ids, access logs, JSON body handling, one error path, 404s. */
export function createBaseApp(): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.use("*", async function requestContext(c, next) {
    const started = performance.now();
    const requestId = crypto.randomUUID();
    c.set("requestId", requestId);
    // Set before the handler runs: a header set on a finished response makes Hono rebuild it.
    c.header("X-Request-Id", requestId);
    await next();
    requestDone({
      requestId,
      teamId: c.get("team")?.id,
      method: c.req.method,
      route: routeOf(c),
      path: c.req.path,
      status: c.res.status,
      started,
    });
  });
  app.use("*", jsonBody);
  app.onError(errorResponse);
  app.notFound((c) => errorResponse(noRoute(app, c.req.method, c.req.path), c));
  return app;
}

/**
 * Why no route answered: 405 with `Allow` when the path has routes of other methods (the caller
 * mistook the method), else 404 'Cannot <METHOD> <path>'.
 */
function noRoute(app: OpenAPIHono<AppEnv>, method: string, path: string): AppError {
  const allowed = allowedMethods(app, path);
  if (allowed.length === 0) return new AppError(404, "route_not_found", `Cannot ${method} ${path}`);
  const named = allowed.filter((m) => m !== "HEAD").join(", ");
  return new AppError(405, "method_not_allowed", `Cannot ${method} ${path}: this path answers ${named}`, {
    headers: { Allow: allowed.join(", ") },
    extra: { allowed_methods: allowed },
  });
}

/**
 * Bounds JSON bodies before validation: over 1 MiB is 413, and an empty body with a JSON content
 * type counts as `{}` (clients send the header on body-less requests). Malformed JSON is answered
 * 400 'Invalid JSON body' where a route validates its body (see knownError).
 */
async function jsonBody(c: Context<AppEnv>, next: () => Promise<void>): Promise<void> {
  const method = c.req.method;
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return await next();
  const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const json = /^application\/([\w.-]+\+)?json$/.test(type);
  const length = c.req.header("content-length");
  if (length !== undefined) {
    // The declared length is enough: the body is read once, by the route's validator.
    if (Number(length) > MAX_BODY_BYTES) throw new AppError(413, "payload_too_large", "Request body too large");
    if (json && Number(length) === 0) emptyJson(c);
    return await next();
  }
  // No declared length (chunked), whatever its type: read here, and no further than the limit (read
  // whole, a 500 MB upload with no key took 2.6 GB before its 413).
  const text = await readBounded(c.req.raw.body);
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
  if (json && text.trim() === "") emptyJson(c);
  await next();
}

/** The body as text, refused with 413 as soon as it is over MAX_BODY_BYTES. */
async function readBounded(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new AppError(413, "payload_too_large", "Request body too large");
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** Hono's json() parses the cached text (a promise at run time, whatever its type says): "{}". */
function emptyJson(c: Context<AppEnv>): void {
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve("{}");
}

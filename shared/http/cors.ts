import type { Context, Next } from "hono";
import type { AppEnv } from "./env.ts";

const ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE";
/** What a browser client sends beyond the simple headers (answered when a preflight names none). */
const ALLOW_HEADERS = "Content-Type, X-API-Key, X-Team-ID, X-Contact-Token, Idempotency-Key";
/** What a browser client may read of an answer beyond the simple headers. */
const EXPOSE_HEADERS =
  "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed";
/** How long a browser may reuse a preflight's answer (seconds). */
const MAX_AGE = "86400";

/**
 * Cross-origin access for browsers: the specification lets publishable keys be used client-side, and
 * a web page (a preference centre) can only call us if we answer its preflight and mark our answers
 * readable. Any origin is allowed: requests authenticate with the X-API-Key header, never cookies,
 * so an origin gains nothing a key would not give it. A preflight (OPTIONS with
 * Access-Control-Request-Method) is answered 204 before the key check, which it never carries. A
 * request without an Origin header (every server-side client) is untouched.
 */
export async function cors(c: Context<AppEnv>, next: Next): Promise<Response | void> {
  if (c.req.header("origin") === undefined) return await next();
  c.header("Access-Control-Allow-Origin", "*");
  const method = c.req.header("access-control-request-method");
  if (c.req.method === "OPTIONS" && method !== undefined) {
    c.header("Access-Control-Allow-Methods", ALLOW_METHODS);
    c.header("Access-Control-Allow-Headers", c.req.header("access-control-request-headers") || ALLOW_HEADERS);
    c.header("Access-Control-Max-Age", MAX_AGE);
    return c.body(null, 204);
  }
  c.header("Access-Control-Expose-Headers", EXPOSE_HEADERS);
  await next();
}

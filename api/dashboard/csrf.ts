import type { Context } from "hono";
import { csrf } from "hono/csrf";
import { sameSecret } from "../admin/auth.ts";
import type { Deps } from "../../shared/deps.ts";

/** The hidden form field that carries the session's synchronizer token. */
export const CSRF_FIELD = "_csrf";

/**
 * The origins the browser may post from: this request's own, the configured PUBLIC_URL's, and the
 * forwarded scheme and host behind a trusted proxy (where the server sees plain http).
 */
function ownOrigins(c: Context, deps: Deps): string[] {
  const origins = [new URL(c.req.url).origin];
  if (deps.config.PUBLIC_URL) origins.push(new URL(deps.config.PUBLIC_URL).origin);
  if (deps.config.TRUST_PROXY) {
    const proto = c.req.header("x-forwarded-proto")?.split(",")[0].trim();
    const host = c.req.header("x-forwarded-host")?.split(",")[0].trim() ?? c.req.header("host");
    if (proto && host) origins.push(`${proto}://${host}`);
  }
  return origins;
}

/**
 * Refuses a state-changing form post from another site (403): it needs `Sec-Fetch-Site: same-origin`
 * or an `Origin` of this service. The sign-in form has no session yet, so this is its only guard.
 */
export function sameOriginPosts(deps: Deps) {
  return csrf({ origin: (origin, c) => ownOrigins(c, deps).includes(origin) });
}

/** Whether a posted form carries the session's synchronizer token (compared in constant time). */
export async function csrfTokenMatches(c: Context, expected: string): Promise<boolean> {
  const form = await c.req.parseBody();
  const given = form[CSRF_FIELD];
  return typeof given === "string" && await sameSecret(given, expected);
}

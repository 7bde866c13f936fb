import type { Context, Next } from "hono";
import { UnauthorizedError } from "../../shared/errors.ts";
import type { AppEnv } from "../../shared/http/env.ts";

async function digest(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
}

/** Compares two secrets in constant time (their SHA-256 digests, so lengths do not leak either). */
export async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** Requires `Authorization: Bearer <token>` with the admin token; anything else is 401 Shape A. */
export function adminAuth(token: string | undefined) {
  return async function authenticateAdmin(c: Context<AppEnv>, next: Next): Promise<void> {
    const given = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
    // Without a configured token nobody is admin; the comparison still runs so timing says nothing.
    const ok = await sameSecret(given ?? "", token ?? "");
    if (!ok || !given || !token) throw new UnauthorizedError("Invalid admin token", "invalid_admin_token");
    await next();
  };
}

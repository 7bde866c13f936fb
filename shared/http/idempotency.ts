import type { Context, Next } from "hono";
import type { Deps } from "../deps.ts";
import { AppError, ConflictError } from "../errors.ts";
import { kvKeys } from "../kv.ts";
import type { AppEnv } from "./env.ts";

const DAY_MS = 86_400_000;
/** How long an in-flight marker survives a crashed request. */
const IN_FLIGHT_MS = 60_000;

type Stored =
  | { state: "in_flight"; fingerprint: string }
  | { state: "done"; fingerprint: string; status: number; body: string; contentType: string };

async function fingerprint(c: Context<AppEnv>): Promise<string> {
  // The body exactly as sent: a retry sends the same bytes.
  const data = new TextEncoder().encode(`${c.req.method} ${c.req.path}\n${await c.req.text()}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return btoa(String.fromCharCode(...digest));
}

/** The first answer again (through `c`, so the headers set so far — request id, rate limit — are kept). */
function replay(c: Context<AppEnv>, stored: Extract<Stored, { state: "done" }>): Response {
  return c.body(stored.body, stored.status as 200, {
    "Content-Type": stored.contentType,
    "Idempotent-Replayed": "true",
  });
}

function answerExisting(c: Context<AppEnv>, stored: Stored, print: string): Response {
  if (stored.fingerprint !== print) {
    throw new AppError(422, "idempotency_key_reused", "Idempotency-Key was already used with a different request body");
  }
  if (stored.state === "in_flight") {
    throw new ConflictError("A request with this Idempotency-Key is still in progress", "idempotency_in_progress");
  }
  return replay(c, stored);
}

/**
 * `Idempotency-Key` on POST: the same key and body within 24 h answer the first response again
 * (header `Idempotent-Replayed: true`) and create nothing; another body is 422; a request while
 * the first is still in flight is 409. 5xx answers are not kept, so a retry runs again.
 */
export function idempotency(deps: Deps) {
  return async function idempotent(c: Context<AppEnv>, next: Next): Promise<Response | void> {
    const idemKey = c.req.header("idempotency-key");
    if (c.req.method !== "POST" || !idemKey) return await next();
    if (idemKey.length > 255) {
      throw new AppError(400, "invalid_idempotency_key", "Idempotency-Key must be at most 255 characters");
    }
    const key = kvKeys.idempotency(c.var.team.id, idemKey);
    const print = await fingerprint(c);
    const existing = await deps.kv.get<Stored>(key);
    if (existing.value) return answerExisting(c, existing.value, print);
    const claimed = await deps.kv.atomic()
      .check(existing)
      .set(key, { state: "in_flight", fingerprint: print } satisfies Stored, { expireIn: IN_FLIGHT_MS })
      .commit();
    if (!claimed.ok) {
      const now = await deps.kv.get<Stored>(key);
      if (now.value) return answerExisting(c, now.value, print);
    }
    await next();
    const res = c.res;
    if (res.status >= 500 || res.status === 409 || res.status === 429) {
      await deps.kv.delete(key);
      return;
    }
    const stored: Stored = {
      state: "done",
      fingerprint: print,
      status: res.status,
      body: await res.clone().text(),
      contentType: res.headers.get("content-type") ?? "application/json",
    };
    await deps.committer.commit((op) => op.set(key, stored, { expireIn: DAY_MS }));
  };
}

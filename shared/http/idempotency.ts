import type { Context, Next } from "hono";
import type { Deps } from "../deps.ts";
import type { IdempotencyRecord } from "../engine/ports.ts";
import { AppError, ConflictError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

const DAY_MS = 86_400_000;
/** How long an in-flight marker survives a crashed request. */
const IN_FLIGHT_MS = 60_000;

async function fingerprint(c: Context<AppEnv>): Promise<string> {
  // The body exactly as sent: a retry sends the same bytes.
  const data = new TextEncoder().encode(`${c.req.method} ${c.req.path}\n${await c.req.text()}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return btoa(String.fromCharCode(...digest));
}

/**
 * The answer to a request whose key another request holds: the first answer again (through `c`, so
 * the headers set so far — request id, rate limit — are kept), 422 for another body, 409 while in flight.
 */
function answerExisting(c: Context<AppEnv>, record: IdempotencyRecord, print: string): Response {
  if (record.fingerprint !== print) {
    throw new AppError(422, "idempotency_key_reused", "Idempotency-Key was already used with a different request body");
  }
  if (record.state === "in_flight") {
    throw new ConflictError("A request with this Idempotency-Key is still in progress", "idempotency_in_progress");
  }
  const { answer } = record;
  return c.body(answer.body, answer.status as 200, {
    "Content-Type": answer.contentType,
    "Idempotent-Replayed": "true",
  });
}

/**
 * `Idempotency-Key` on POST: the same key and body within 24 h answer the first response again
 * (header `Idempotent-Replayed: true`) and create nothing; another body is 422; a request while
 * the first is still in flight is 409. 5xx, 401, 409 and 429 answers are not kept, so a retry runs again.
 */
export function idempotency(deps: Deps) {
  return async function idempotent(c: Context<AppEnv>, next: Next): Promise<Response | void> {
    const idemKey = c.req.header("idempotency-key");
    if (c.req.method !== "POST" || !idemKey) return await next();
    if (idemKey.length > 255) {
      throw new AppError(400, "invalid_idempotency_key", "Idempotency-Key must be at most 255 characters");
    }
    const teamId = c.get("team").id;
    const print = await fingerprint(c);
    const claim = await deps.idempotency.claim(teamId, idemKey, { fingerprint: print, inFlightMs: IN_FLIGHT_MS });
    if (!claim.claimed) return answerExisting(c, claim.record, print);
    await next();
    const res = c.res;
    // Not kept either: a 401 (the event send's missing X-Team-ID) refused who asked, not what was asked,
    // so the retry with the header corrected must run.
    if (res.status >= 500 || res.status === 401 || res.status === 409 || res.status === 429) {
      await deps.idempotency.release(teamId, idemKey);
      return;
    }
    const answer = {
      status: res.status,
      contentType: res.headers.get("content-type") ?? "application/json",
      body: await res.clone().text(),
    };
    await deps.idempotency.complete(teamId, idemKey, { fingerprint: print, answer, ttlMs: DAY_MS });
  };
}

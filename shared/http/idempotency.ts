import type { Context, Next } from "hono";
import type { Deps } from "../deps.ts";
import { AppError, ConflictError } from "../errors.ts";
import { kvKeys } from "../kv.ts";
import { log } from "../log.ts";
import type { AppEnv } from "./env.ts";

const DAY_MS = 86_400_000;
/** How long an in-flight marker survives a crashed request. */
const IN_FLIGHT_MS = 60_000;
/**
 * A Deno KV value holds at most 64 KiB (a string may take two bytes a character): a longer answer
 * (a 1,000-contact bulk create …) is kept gzipped in parts beside the record, in one commit of its own.
 */
const MAX_INLINE_CHARS = 30_000;
const PART_BYTES = 60_000;
/** Parts in one commit stay under Deno KV's 800 KiB a commit; a larger answer is not kept. */
const MAX_PARTS = 12;

type Done = { state: "done"; fingerprint: string; status: number; contentType: string };
type Stored =
  | { state: "in_flight"; fingerprint: string }
  | Done & { body: string }
  | Done & { parts: number };

/** The key of part `i` of a stored answer (under the record's key). */
function partKey(teamId: string, idemKey: string, i: number) {
  return [...kvKeys.idempotency(teamId, idemKey), "part", i] as const;
}

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function gunzip(parts: Uint8Array[]): Promise<string> {
  const stream = new Blob(parts as BlobPart[]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

async function fingerprint(c: Context<AppEnv>): Promise<string> {
  // The body exactly as sent: a retry sends the same bytes.
  const data = new TextEncoder().encode(`${c.req.method} ${c.req.path}\n${await c.req.text()}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return btoa(String.fromCharCode(...digest));
}

/** The first answer again (through `c`, so the headers set so far — request id, rate limit — are kept). */
function replay(c: Context<AppEnv>, stored: Done, body: string): Response {
  return c.body(body, stored.status as 200, {
    "Content-Type": stored.contentType,
    "Idempotent-Replayed": "true",
  });
}

/** The body of a stored answer, reassembled from its parts; undefined when a part has expired already. */
async function storedBody(deps: Deps, teamId: string, idemKey: string, stored: Stored): Promise<string | undefined> {
  if (stored.state !== "done") return undefined;
  if ("body" in stored) return stored.body;
  const parts: Uint8Array[] = [];
  for (let i = 0; i < stored.parts; i += 10) {
    const keys = Array.from({ length: Math.min(10, stored.parts - i) }, (_, j) => partKey(teamId, idemKey, i + j));
    for (const entry of await deps.kv.getMany<Uint8Array[]>(keys)) {
      if (!entry.value) return undefined;
      parts.push(entry.value);
    }
  }
  return await gunzip(parts);
}

/** The answer to a request whose key is already recorded; undefined when the record is gone after all. */
async function answerExisting(
  c: Context<AppEnv>,
  deps: Deps,
  idemKey: string,
  stored: Stored,
  print: string,
): Promise<Response | undefined> {
  if (stored.fingerprint !== print) {
    throw new AppError(422, "idempotency_key_reused", "Idempotency-Key was already used with a different request body");
  }
  if (stored.state === "in_flight") {
    throw new ConflictError("A request with this Idempotency-Key is still in progress", "idempotency_in_progress");
  }
  const body = await storedBody(deps, c.get("team").id, idemKey, stored);
  return body === undefined ? undefined : replay(c, stored, body);
}

/** Records the first answer: inline when it fits one KV value, else gzipped in parts (or not at all, logged). */
async function keep(deps: Deps, teamId: string, idemKey: string, done: Done, body: string): Promise<void> {
  const key = kvKeys.idempotency(teamId, idemKey);
  if (body.length <= MAX_INLINE_CHARS) {
    const stored: Stored = { ...done, body };
    await deps.committer.commit((op) => op.set(key, stored, { expireIn: DAY_MS }));
    return;
  }
  const packed = await gzip(body);
  const count = Math.ceil(packed.length / PART_BYTES);
  if (count > MAX_PARTS) {
    // Not kept (as for a 5xx): a retry runs again rather than answering 409 until the marker expires.
    log("warn", "idempotent answer too large to keep", { team_id: teamId, bytes: packed.length });
    await deps.kv.delete(key);
    return;
  }
  // A commit of its own: in a group commit, parts this large could push the group past KV's limits.
  const op = deps.kv.atomic();
  for (let i = 0; i < count; i++) {
    op.set(partKey(teamId, idemKey, i), packed.subarray(i * PART_BYTES, (i + 1) * PART_BYTES), { expireIn: DAY_MS });
  }
  op.set(key, { ...done, parts: count } satisfies Stored, { expireIn: DAY_MS });
  const res = await op.commit();
  if (!res.ok) throw new Error("Cannot keep the idempotent answer: unexpected check failure");
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
    const key = kvKeys.idempotency(c.get("team").id, idemKey);
    const print = await fingerprint(c);
    const existing = await deps.kv.get<Stored>(key);
    if (existing.value) {
      const answer = await answerExisting(c, deps, idemKey, existing.value, print);
      if (answer) return answer;
    }
    const claimed = await deps.kv.atomic()
      .check(existing)
      .set(key, { state: "in_flight", fingerprint: print } satisfies Stored, { expireIn: IN_FLIGHT_MS })
      .commit();
    if (!claimed.ok) {
      const now = await deps.kv.get<Stored>(key);
      const answer = now.value && await answerExisting(c, deps, idemKey, now.value, print);
      if (answer) return answer;
      if (now.value) {
        throw new ConflictError("A request with this Idempotency-Key is still in progress", "idempotency_in_progress");
      }
    }
    await next();
    const res = c.res;
    // Not kept either: a 401 (the event send's missing X-Team-ID) refused who asked, not what was asked,
    // so the retry with the header corrected must run.
    if (res.status >= 500 || res.status === 401 || res.status === 409 || res.status === 429) {
      await deps.kv.delete(key);
      return;
    }
    const done: Done = {
      state: "done",
      fingerprint: print,
      status: res.status,
      contentType: res.headers.get("content-type") ?? "application/json",
    };
    await keep(deps, c.get("team").id, idemKey, done, await res.clone().text());
  };
}

import type { KvCommitter } from "../../kv.ts";
import { kvKeys } from "../../kv.ts";
import { log } from "../../log.ts";
import {
  CLAIM_ROUNDS,
  type ClaimOptions,
  type CompleteOptions,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotencyStore,
} from "../ports.ts";
import type { CheckedCommitter } from "./checked_commit.ts";

/**
 * A Deno KV value holds at most 64 KiB (a string may take two bytes a character): a longer answer
 * (a 1,000-contact bulk create …) is kept gzipped in parts beside the record, in one commit of its own.
 */
const MAX_INLINE_CHARS = 30_000;
const PART_BYTES = 60_000;
/** Parts in one commit stay under Deno KV's 800 KiB a commit; a larger answer is not kept. */
const MAX_PARTS = 12;

type Done = { state: "done"; fingerprint: string; status: number; contentType: string };
/** A record as KV holds it. */
type Stored =
  | { state: "in_flight"; fingerprint: string }
  | Done & { body: string }
  | Done & { parts: number };

/** The key of part `i` of a stored answer (under the record's key). */
function partKey(scope: string, key: string, i: number) {
  return [...kvKeys.idempotency(scope, key), "part", i] as const;
}

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function gunzip(parts: Uint8Array[]): Promise<string> {
  const stream = new Blob(parts as BlobPart[]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

/**
 * Idempotency records in Deno KV. A claim is a commit checked against the versionstamp read, and
 * concurrent claims of other keys share it (group commit); answers are written through the group
 * committer, except a large one, kept gzipped in parts in a commit of its own.
 */
export class KvIdempotency implements IdempotencyStore {
  #kv: Deno.Kv;
  #committer: KvCommitter;
  #checked: CheckedCommitter;

  constructor(kv: Deno.Kv, committer: KvCommitter, checked: CheckedCommitter) {
    this.#kv = kv;
    this.#committer = committer;
    this.#checked = checked;
  }

  async claim(scope: string, key: string, { fingerprint, inFlightMs }: ClaimOptions): Promise<IdempotencyClaim> {
    const recordKey = kvKeys.idempotency(scope, key);
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const entry = await this.#kv.get<Stored>(recordKey);
      const record = entry.value && await this.#read(scope, key, entry.value);
      if (record) return { claimed: false, record };
      // Free, or an answer whose parts have expired: ours if nobody wrote it since.
      const claimed = await this.#checked.commit([recordKey], (op) => {
        op.check(entry).set(recordKey, { state: "in_flight", fingerprint } satisfies Stored, { expireIn: inFlightMs });
      });
      if (claimed) return { claimed: true };
    }
    return { claimed: false, record: { state: "in_flight", fingerprint } };
  }

  async complete(scope: string, key: string, { fingerprint, answer, ttlMs }: CompleteOptions): Promise<boolean> {
    const recordKey = kvKeys.idempotency(scope, key);
    const done: Done = { state: "done", fingerprint, status: answer.status, contentType: answer.contentType };
    if (answer.body.length <= MAX_INLINE_CHARS) {
      const stored: Stored = { ...done, body: answer.body };
      await this.#committer.commit((op) => op.set(recordKey, stored, { expireIn: ttlMs }));
      return true;
    }
    const packed = await gzip(answer.body);
    const count = Math.ceil(packed.length / PART_BYTES);
    if (count > MAX_PARTS) {
      // Not kept (as for a 5xx): a retry runs again rather than answering 409 until the marker expires.
      log("warn", "idempotent answer too large to keep", { team_id: scope, bytes: packed.length });
      await this.release(scope, key);
      return false;
    }
    // A commit of its own: in a group commit, parts this large could push the group past KV's limits.
    const op = this.#kv.atomic();
    for (let i = 0; i < count; i++) {
      op.set(partKey(scope, key, i), packed.subarray(i * PART_BYTES, (i + 1) * PART_BYTES), { expireIn: ttlMs });
    }
    op.set(recordKey, { ...done, parts: count } satisfies Stored, { expireIn: ttlMs });
    const res = await op.commit();
    if (!res.ok) throw new Error("Cannot keep the idempotent answer: unexpected check failure");
    return true;
  }

  async release(scope: string, key: string): Promise<void> {
    await this.#committer.commit((op) => op.delete(kvKeys.idempotency(scope, key)));
  }

  /** The record as the port answers it; undefined when a part of its answer has expired already. */
  async #read(scope: string, key: string, stored: Stored): Promise<IdempotencyRecord | undefined> {
    if (stored.state === "in_flight") return stored;
    const { fingerprint, status, contentType } = stored;
    const body = "body" in stored ? stored.body : await this.#parts(scope, key, stored.parts);
    return body === undefined ? undefined : { state: "done", fingerprint, answer: { status, contentType, body } };
  }

  async #parts(scope: string, key: string, count: number): Promise<string | undefined> {
    const parts: Uint8Array[] = [];
    for (let i = 0; i < count; i += 10) {
      const keys = Array.from({ length: Math.min(10, count - i) }, (_, j) => partKey(scope, key, i + j));
      for (const entry of await this.#kv.getMany<Uint8Array[]>(keys)) {
        if (!entry.value) return undefined;
        parts.push(entry.value);
      }
    }
    return await gunzip(parts);
  }
}

import { Batcher } from "../../batcher.ts";
import type { Sql } from "../../db.ts";
import {
  CLAIM_ROUNDS,
  type ClaimOptions,
  type CompleteOptions,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotencyStore,
} from "../ports.ts";

interface Row {
  fingerprint: string;
  state: "in_flight" | "done";
  status: number | null;
  content_type: string | null;
  body: string | null;
}

function toRecord(row: Row): IdempotencyRecord {
  if (row.state === "in_flight") return { state: "in_flight", fingerprint: row.fingerprint };
  return {
    state: "done",
    fingerprint: row.fingerprint,
    answer: { status: row.status ?? 200, contentType: row.content_type ?? "application/json", body: row.body ?? "" },
  };
}

/** A claim waiting for its group's statement, and what that statement found for it. */
interface Waiting extends ClaimOptions {
  scope: string;
  key: string;
  /** Undefined when the key was freed between the insert and the read: claimed again. */
  outcome?: IdempotencyClaim;
}

/** An answer waiting for its group's statement. */
interface Completion extends CompleteOptions {
  scope: string;
  key: string;
}

/** Claims (or answers) in one statement at most. */
const MAX_GROUP = 500;

function idOf(claim: { scope: string; key: string }): string {
  return JSON.stringify([claim.scope, claim.key]);
}

/**
 * Idempotency records in Postgres. A claim takes the key when it is free or past its expiry with
 * `INSERT … ON CONFLICT … WHERE expires_at <= now()`, so of racing claims (on any replica) exactly
 * one wins; concurrent claims share that statement (group commit), one of them per key, and
 * concurrent answers share one too.
 */
export class PostgresIdempotency implements IdempotencyStore {
  #sql: Sql;
  #claims: Batcher<Waiting>;
  #answers: Batcher<Completion>;

  constructor(sql: Sql) {
    this.#sql = sql;
    this.#claims = new Batcher((group) => this.#claimGroup(group), { maxWeight: MAX_GROUP });
    // An answer may be large (a bulk create's): a group carries about 8 MB of bodies at most.
    this.#answers = new Batcher((group) => this.#completeGroup(group), { maxWeight: 8_000_000, maxCount: MAX_GROUP });
  }

  async claim(scope: string, key: string, options: ClaimOptions): Promise<IdempotencyClaim> {
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const waiting: Waiting = { scope, key, ...options };
      await this.#claims.add(waiting);
      if (waiting.outcome) return waiting.outcome;
    }
    return { claimed: false, record: { state: "in_flight", fingerprint: options.fingerprint } };
  }

  async #claimGroup(group: Waiting[]): Promise<void> {
    // The first claim of each key goes in; the others of the group find it in flight.
    const leaders = new Map<string, Waiting>();
    for (const w of group) if (!leaders.has(idOf(w))) leaders.set(idOf(w), w);
    const first = [...leaders.values()];
    const taken: { scope: string; key: string }[] = await this.#sql`
      insert into engine_idempotency as i (scope, key, fingerprint, state, expires_at)
      select scope, key, fingerprint, 'in_flight', now() + ms * interval '1 millisecond'
      from unnest(
        ${first.map((w) => w.scope)}::text[], ${first.map((w) => w.key)}::text[],
        ${first.map((w) => w.fingerprint)}::text[], ${first.map((w) => w.inFlightMs)}::float8[]
      ) as t(scope, key, fingerprint, ms)
      on conflict (scope, key) do update set
        fingerprint = excluded.fingerprint, state = 'in_flight', status = null, content_type = null, body = null,
        expires_at = excluded.expires_at
        where i.expires_at <= now()
      returning scope, key`;
    const ours = new Set(taken.map(idOf));
    const lost = first.filter((w) => !ours.has(idOf(w)));
    const scopes = lost.map((w) => w.scope);
    const keys = lost.map((w) => w.key);
    const held: (Row & { scope: string; key: string })[] = lost.length === 0 ? [] : await this.#sql`
      select scope, key, fingerprint, state, status, content_type, body from engine_idempotency
      where (scope, key) in (select * from unnest(${scopes}::text[], ${keys}::text[])) and expires_at > now()`;
    const records = new Map(held.map((row) => [idOf(row), toRecord(row)]));
    for (const w of group) {
      const id = idOf(w);
      const leader = leaders.get(id)!;
      const record = ours.has(id) ? { state: "in_flight" as const, fingerprint: leader.fingerprint } : records.get(id);
      w.outcome = w === leader && ours.has(id) ? { claimed: true } : record && { claimed: false, record };
    }
  }

  async complete(scope: string, key: string, options: CompleteOptions): Promise<boolean> {
    await this.#answers.add({ scope, key, ...options }, options.answer.body.length);
    return true;
  }

  async #completeGroup(group: Completion[]): Promise<void> {
    // One row per key in a statement: of two answers to one key, the later stands, as if written in turn.
    const last = [...new Map(group.map((c) => [idOf(c), c])).values()];
    await this.#sql`
      insert into engine_idempotency as i (scope, key, fingerprint, state, status, content_type, body, expires_at)
      select scope, key, fingerprint, 'done', status, content_type, body, now() + ms * interval '1 millisecond'
      from unnest(${last.map((c) => c.scope)}::text[], ${last.map((c) => c.key)}::text[],
        ${last.map((c) => c.fingerprint)}::text[], ${last.map((c) => c.answer.status)}::int4[],
        ${last.map((c) => c.answer.contentType)}::text[], ${last.map((c) => c.answer.body)}::text[],
        ${last.map((c) => c.ttlMs)}::float8[]) as t(scope, key, fingerprint, status, content_type, body, ms)
      on conflict (scope, key) do update set
        fingerprint = excluded.fingerprint, state = 'done', status = excluded.status,
        content_type = excluded.content_type, body = excluded.body, expires_at = excluded.expires_at`;
  }

  async release(scope: string, key: string): Promise<void> {
    await this.#sql`delete from engine_idempotency where scope = ${scope} and key = ${key}`;
  }
}

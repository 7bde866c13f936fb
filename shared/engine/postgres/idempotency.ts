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

/**
 * Idempotency records in Postgres: a claim is one `INSERT … ON CONFLICT` that takes the key when it
 * is free or past its expiry, so of racing claims (on any replica) exactly one wins.
 */
export class PostgresIdempotency implements IdempotencyStore {
  #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async claim(scope: string, key: string, { fingerprint, inFlightMs }: ClaimOptions): Promise<IdempotencyClaim> {
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const [taken] = await this.#sql`
        insert into engine_idempotency as i (scope, key, fingerprint, state, expires_at)
        values (${scope}, ${key}, ${fingerprint}, 'in_flight', now() + ${inFlightMs}::float8 * interval '1 millisecond')
        on conflict (scope, key) do update set
          fingerprint = excluded.fingerprint, state = 'in_flight', status = null, content_type = null, body = null,
          expires_at = excluded.expires_at
          where i.expires_at <= now()
        returning 1`;
      if (taken) return { claimed: true };
      const [held]: [Row?] = await this.#sql`
        select fingerprint, state, status, content_type, body from engine_idempotency
        where scope = ${scope} and key = ${key} and expires_at > now()`;
      // Released or expired since the insert: claim again.
      if (held) return { claimed: false, record: toRecord(held) };
    }
    return { claimed: false, record: { state: "in_flight", fingerprint } };
  }

  async complete(scope: string, key: string, { fingerprint, answer, ttlMs }: CompleteOptions): Promise<boolean> {
    await this.#sql`
      insert into engine_idempotency as i (scope, key, fingerprint, state, status, content_type, body, expires_at)
      values (${scope}, ${key}, ${fingerprint}, 'done', ${answer.status}, ${answer.contentType}, ${answer.body},
        now() + ${ttlMs}::float8 * interval '1 millisecond')
      on conflict (scope, key) do update set
        fingerprint = excluded.fingerprint, state = 'done', status = excluded.status,
        content_type = excluded.content_type, body = excluded.body, expires_at = excluded.expires_at`;
    return true;
  }

  async release(scope: string, key: string): Promise<void> {
    await this.#sql`delete from engine_idempotency where scope = ${scope} and key = ${key}`;
  }
}

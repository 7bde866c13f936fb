import type postgres from "postgres";
import type { Sql } from "../../db.ts";
import {
  type ActiveCount,
  type ExpiringRecords,
  LostRace,
  type PutOptions,
  type UnitOfWork,
  type Versioned,
} from "../ports.ts";
import { transactionOf } from "./unit.ts";

/**
 * Records of one kind in Postgres (`engine_records`): a write names the version it read and lands
 * only if that is still the record's (`UPDATE … WHERE version =`, or for a new record an `INSERT …
 * ON CONFLICT` that takes only an expired one), so of two racers exactly one wins.
 */
export class PostgresRecords implements ExpiringRecords {
  #sql: Sql;
  #kind: string;

  constructor(sql: Sql, kind: string) {
    this.#sql = sql;
    this.#kind = kind;
  }

  async get<T>(scope: string, id: string): Promise<Versioned<T> | null> {
    const [row]: [{ value: T; version: number }?] = await this.#sql`
      select value, version from engine_records
      where kind = ${this.#kind} and scope = ${scope} and id = ${id} and expires_at > now()`;
    return row ? { value: row.value, version: String(row.version) } : null;
  }

  async put<T>(scope: string, id: string, value: T, options: PutOptions, unitOfWork?: UnitOfWork): Promise<boolean> {
    if (!unitOfWork) return await this.#put(this.#sql, scope, id, value, options);
    // In a unit, a lost check rolls the whole unit back.
    if (!await this.#put(transactionOf(unitOfWork), scope, id, value, options)) throw new LostRace();
    return true;
  }

  async #put<T>(sql: Sql | postgres.TransactionSql, scope: string, id: string, value: T, options: PutOptions) {
    // A null value is JSON null (an emptied record), not SQL NULL.
    const json = value === null ? sql`'null'::jsonb` : sql.json(value as Parameters<typeof sql.json>[0]);
    const expiresAt = sql`now() + ${options.ttlMs}::float8 * interval '1 millisecond'`;
    if (options.expected === null) {
      const [row] = await sql`
        insert into engine_records as r (kind, scope, id, value, version, active_until, expires_at)
        values (${this.#kind}, ${scope}, ${id}, ${json}, nextval('engine_record_versions'), ${options.activeUntil},
          ${expiresAt})
        on conflict (kind, scope, id) do update set
          value = excluded.value, version = excluded.version, active_until = excluded.active_until,
          expires_at = excluded.expires_at
          where r.expires_at <= now()
        returning 1`;
      return row !== undefined;
    }
    const [row] = await sql`
      update engine_records set value = ${json}, version = nextval('engine_record_versions'),
        active_until = ${options.activeUntil}, expires_at = ${expiresAt}
      where kind = ${this.#kind} and scope = ${scope} and id = ${id}
        and version = ${Number(options.expected)} and expires_at > now()
      returning 1`;
    return row !== undefined;
  }

  async countActive(scope: string, now: number): Promise<ActiveCount> {
    const [row]: [{ count: number; soonest: number | null }] = await this.#sql`
      select count(*)::int as count, min(active_until) as soonest from engine_records
      where kind = ${this.#kind} and scope = ${scope} and active_until > ${now} and expires_at > now()`;
    return { count: row.count, soonestEnd: row.soonest === null ? null : Number(row.soonest) };
  }
}

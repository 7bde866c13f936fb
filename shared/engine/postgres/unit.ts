import type postgres from "postgres";
import type { Sql } from "../../db.ts";
import { LostRace, type UnitOfWork } from "../ports.ts";

/** A unit of work on Postgres: one transaction, which every write of the unit runs in. */
export interface PostgresUnit extends UnitOfWork {
  readonly engine: "postgres";
  readonly tx: postgres.TransactionSql;
}

/** Runs `work` in one transaction; false (rolled back) when a version check in it lost. */
export async function postgresAtomically(
  sql: Sql,
  work: (unit: UnitOfWork) => Promise<void> | void,
): Promise<boolean> {
  try {
    await sql.begin(async (tx) => {
      const unit: PostgresUnit = { engine: "postgres", tx };
      await work(unit);
    });
    return true;
  } catch (err) {
    if (err instanceof LostRace) return false;
    throw err;
  }
}

/** The transaction of a unit of work, which must be a Postgres one. */
export function transactionOf(unit: UnitOfWork): postgres.TransactionSql {
  if (unit.engine !== "postgres") throw new Error(`Cannot write to Postgres in a unit of work on ${unit.engine}`);
  return (unit as PostgresUnit).tx;
}

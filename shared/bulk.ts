import type postgres from "postgres";
import type { Db } from "./db.ts";

/** The Postgres types a bulk column is cast to. */
export type BulkType = "text" | "uuid" | "int" | "bigint" | "timestamptz";

/** One column of a bulk insert: its type and each row's value, in row order (a time as ISO text). */
export interface BulkColumn {
  type: BulkType;
  values: readonly (string | number | null)[];
}

/**
 * The column list and rows of an `INSERT INTO table …`: `(a, b, …) select … from unnest(…)`, one
 * parameter a column whatever the number of rows (far cheaper to build and parse than one a value).
 * A column holding the same value in every row is sent once, as a scalar: in a fan-out batch most
 * columns are (team, trigger, execution, channel, status, provider …), and building their
 * 500-element arrays in postgres.js (each element quoted and escaped) and parsing them in Postgres
 * cost about a third of the batch's inserts. Every column must have the same number of values.
 */
export function bulkRows(db: Db, columns: Record<string, BulkColumn>): postgres.Fragment {
  const names = Object.keys(columns);
  const count = columns[names[0]].values.length;
  for (const name of names) {
    if (columns[name].values.length !== count) throw new Error(`bulkRows: column ${name} has the wrong length`);
  }
  const varying = names.filter((name) => !uniform(columns[name].values));
  const cast = (name: string) => db.unsafe(columns[name].type);
  const selected = names.map((name) =>
    varying.includes(name) ? db`r.${db(name)}` : db`${columns[name].values[0]}::${cast(name)}`
  );
  const source = varying.length === 0
    ? db`generate_series(1, ${count}::int) as r`
    : db`unnest(${list(db, varying.map((name) => db`${columns[name].values}::${cast(name)}[]`))}) as r(${db(varying)})`;
  return db`(${db(names)}) select ${list(db, selected)} from ${source}`;
}

function uniform(values: readonly unknown[]): boolean {
  const first = values[0];
  for (let i = 1; i < values.length; i++) if (values[i] !== first) return false;
  return true;
}

/** Fragments joined by commas (postgres.js joins a list of fragments with spaces). */
function list(db: Db, items: postgres.Fragment[]): postgres.Fragment[] {
  return items.map((item, i) => i === 0 ? item : db`, ${item}`);
}

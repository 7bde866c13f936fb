import type postgres from "postgres";
import type { Db } from "./db.ts";

/** The Postgres types a bulk column is cast to. */
export type BulkType = "text" | "uuid" | "int" | "bigint" | "timestamptz" | "boolean";

/** A value of a bulk column (a time as ISO text). */
export type BulkValue = string | number | boolean | null;

/** One column of a bulk insert: its type and each row's value, in row order, or one value for every row. */
export type BulkColumn = { type: BulkType; values: readonly BulkValue[] } | { type: BulkType; value: BulkValue };

/**
 * The column list and rows of an `INSERT INTO table …`: `(a, b, …) select … from unnest(…)`, one
 * parameter a column whatever the number of rows (far cheaper to build and parse than one a value).
 * A column holding the same value in every row is sent once, as a scalar: in a fan-out batch most
 * columns are (team, trigger, execution, channel, status, provider …), and building their
 * 500-element arrays in postgres.js (each element quoted and escaped) and parsing them in Postgres
 * cost about a third of the batch's inserts. The statement's text depends on which columns vary: a
 * few shapes, each prepared once a connection. Every list of values must be as long as the others
 * (one row when every column has one value).
 */
export function bulkRows(db: Db, columns: Record<string, BulkColumn>): postgres.Fragment {
  const names = Object.keys(columns);
  const lists = new Map<string, readonly BulkValue[]>();
  for (const name of names) {
    const column = columns[name];
    if ("values" in column) lists.set(name, column.values);
  }
  const count = lists.size === 0 ? 1 : [...lists.values()][0].length;
  for (const [name, values] of lists) {
    if (values.length !== count) throw new Error(`bulkRows: column ${name} has the wrong length`);
  }
  const varying = names.filter((name) => !uniform(lists.get(name)));
  const cast = (name: string) => db.unsafe(columns[name].type);
  const one = (name: string) => {
    const column = columns[name];
    return "values" in column ? column.values[0] : column.value;
  };
  const selected = names.map((name) => varying.includes(name) ? db`r.${db(name)}` : db`${one(name)}::${cast(name)}`);
  const source = varying.length === 0
    ? db`generate_series(1, ${count}::int) as r`
    : db`unnest(${list(db, varying.map((name) => arrayParameter(db, columns[name].type, lists.get(name)!)))}) as r(${
      db(varying)
    })`;
  return db`(${db(names)}) select ${list(db, selected)} from ${source}`;
}

/**
 * A varying column's values as one array parameter cast to `type[]`. postgres.js 3.4 mistypes boolean
 * arrays: JS booleans went as one boolean ('cannot cast type boolean to boolean[]'), and strings cast
 * to boolean[] all came back false. Sent as text[] and cast from it, they arrive as given.
 */
function arrayParameter(db: Db, type: BulkType, values: readonly BulkValue[]): postgres.Fragment {
  if (type !== "boolean") return db`${values}::${db.unsafe(type)}[]`;
  return db`${values.map((v) => v === null ? null : String(v))}::text[]::boolean[]`;
}

/** True for one value for every row: a single value, or a list holding the same one throughout. */
function uniform(values: readonly BulkValue[] | undefined): boolean {
  if (values === undefined) return true;
  const first = values[0];
  for (let i = 1; i < values.length; i++) if (values[i] !== first) return false;
  return true;
}

/** Fragments joined by commas (postgres.js joins a list of fragments with spaces). */
function list(db: Db, items: postgres.Fragment[]): postgres.Fragment[] {
  return items.map((item, i) => i === 0 ? item : db`, ${item}`);
}

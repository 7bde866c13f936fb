/**
 * What the database spends on the work of a measurement (issue 29: Postgres CPU and WAL bytes per
 * accepted send and per delivery): the CPU of the backends serving the bench database (from /proc,
 * when the server runs on this machine; its autovacuum workers apart, as they may be cleaning up
 * after an earlier scenario) and the WAL the cluster wrote (pg_current_wal_lsn() before and after).
 * WAL is the whole cluster's: other databases written meanwhile count too.
 */
import type postgres from "postgres";
import { cpuSeconds } from "./server.ts";

/** The database's counters at one moment. */
export interface PgSnapshot {
  /** CPU seconds of each client backend serving the bench database, by pid. */
  cpu: Map<number, number>;
  /** The same of its autovacuum workers (which may be paying for earlier work, e.g. a fan-out's rows). */
  autovacuum: Map<number, number>;
  /** The cluster's WAL position, in bytes. */
  wal: bigint;
}

/** Reads the database's counters. */
export interface PgProbe {
  snapshot(): Promise<PgSnapshot>;
}

/** What the database spent between two snapshots. */
export interface PgCost {
  /** Client backend CPU seconds (a backend that ended in between is missed; one that started counts whole). */
  cpuSeconds: number;
  /** Autovacuum workers' CPU seconds, counted the same way. */
  autovacuumSeconds: number;
  walBytes: number;
}

/** Parses an LSN (`16/B374D848`) into bytes. */
export function parseLsn(lsn: string): bigint {
  const [hi, lo] = lsn.split("/");
  if (lo === undefined) throw new Error(`not an LSN: ${lsn}`);
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** A probe over `sql` (a connection to the server, any database) and the backends of database `name`. */
export function pgProbe(sql: postgres.Sql, name: string): PgProbe {
  return {
    async snapshot() {
      const cpu = new Map<number, number>();
      const autovacuum = new Map<number, number>();
      const backends = await sql<{ pid: number; kind: string }[]>`
        select pid, backend_type as kind from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
      for (const { pid, kind } of backends) {
        (kind === "autovacuum worker" ? autovacuum : cpu).set(pid, await cpuSeconds(pid));
      }
      const [{ lsn }] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
      return { cpu, autovacuum, wal: parseLsn(lsn) };
    },
  };
}

/** CPU seconds spent from `before` to `after` by the processes of `after`. */
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, now] of after) seconds += now - (before.get(pid) ?? 0);
  return seconds;
}

/** What was spent from `before` to `after`. */
export function pgCost(before: PgSnapshot, after: PgSnapshot): PgCost {
  return {
    cpuSeconds: spent(before.cpu, after.cpu),
    autovacuumSeconds: spent(before.autovacuum, after.autovacuum),
    walBytes: Number(after.wal - before.wal),
  };
}

/**
 * "Postgres 41 µs CPU (+ 3 µs autovacuum) + 1,204 B WAL per accepted send, …": the cost divided by
 * each count given.
 */
export function describePgCost(cost: PgCost, per: Record<string, number>): string {
  const us = (seconds: number, n: number) => Math.round((seconds * 1e6) / n).toLocaleString("en-US");
  const parts = Object.entries(per).filter(([, n]) => n > 0).map(([what, n]) =>
    `${us(cost.cpuSeconds, n)} µs CPU${
      cost.autovacuumSeconds > 0 ? ` (+ ${us(cost.autovacuumSeconds, n)} µs autovacuum)` : ""
    } + ${Math.round(cost.walBytes / n).toLocaleString("en-US")} B WAL per ${what}`
  );
  return parts.length > 0 ? `Postgres ${parts.join(", ")}` : "Postgres: nothing to divide by";
}

/** Measures what `work` cost the database; `undefined` without a probe (PGlite, or a remote server). */
export async function measurePg<T>(probe: PgProbe | undefined, work: () => Promise<T>): Promise<[T, PgCost?]> {
  if (!probe) return [await work()];
  const before = await probe.snapshot();
  const result = await work();
  return [result, pgCost(before, await probe.snapshot())];
}

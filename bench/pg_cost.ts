/**
 * What the database spends on the work of a measurement (issue 29: Postgres CPU and WAL bytes per
 * accepted send and per delivery): the CPU of the backends serving the bench database (from /proc,
 * when the server runs on this machine) and the WAL the cluster wrote (pg_current_wal_lsn() before and
 * after). WAL is the whole cluster's: other databases written meanwhile count too.
 */
import type postgres from "postgres";
import { cpuSeconds } from "./server.ts";

/** The database's counters at one moment. */
export interface PgSnapshot {
  /** CPU seconds of each backend serving the bench database, by pid. */
  cpu: Map<number, number>;
  /** The cluster's WAL position, in bytes. */
  wal: bigint;
}

/** Reads the database's counters. */
export interface PgProbe {
  snapshot(): Promise<PgSnapshot>;
}

/** What the database spent between two snapshots. */
export interface PgCost {
  /** Backend CPU seconds (a backend that ended in between is missed; one that started counts whole). */
  cpuSeconds: number;
  walBytes: number;
}

/** Parses an LSN (`16/B374D848`) into bytes. */
export function parseLsn(lsn: string): bigint {
  const [hi, lo] = lsn.split("/");
  if (lo === undefined) throw new Error(`not an LSN: ${lsn}`);
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** A probe over `sql` (a connection to the server, any database) and the bench database's backends. */
export function pgProbe(sql: postgres.Sql, pids: () => Promise<number[]>): PgProbe {
  return {
    async snapshot() {
      const cpu = new Map<number, number>();
      for (const pid of await pids()) cpu.set(pid, await cpuSeconds(pid));
      const [{ lsn }] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
      return { cpu, wal: parseLsn(lsn) };
    },
  };
}

/** What was spent from `before` to `after`. */
export function pgCost(before: PgSnapshot, after: PgSnapshot): PgCost {
  let cpu = 0;
  for (const [pid, seconds] of after.cpu) cpu += seconds - (before.cpu.get(pid) ?? 0);
  return { cpuSeconds: cpu, walBytes: Number(after.wal - before.wal) };
}

/** "Postgres 41 µs CPU + 1,204 B WAL per accepted send (…)": the cost divided by each count given. */
export function describePgCost(cost: PgCost, per: Record<string, number>): string {
  const parts = Object.entries(per).filter(([, n]) => n > 0).map(([what, n]) =>
    `${Math.round((cost.cpuSeconds * 1e6) / n).toLocaleString("en-US")} µs CPU + ${
      Math.round(cost.walBytes / n).toLocaleString("en-US")
    } B WAL per ${what}`
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

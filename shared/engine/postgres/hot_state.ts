import type { Sql } from "../../db.ts";
import { log } from "../../log.ts";
import type { HotState } from "../ports.ts";
import { PostgresCounters } from "./counters.ts";
import { PostgresIdempotency } from "./idempotency.ts";
import { PostgresRecords } from "./records.ts";
import { PostgresSendState } from "./send_state.ts";
import { sweepExpired } from "./sweep.ts";
import { postgresAtomically } from "./unit.ts";

/** How often a process deletes expired hot state (every replica does; a delete of nothing is cheap). */
const SWEEP_EVERY_MS = 60_000;

/** The hot-state ports on Postgres; with `sweep`, expired rows are deleted every minute until closed. */
export function postgresHotState(sql: Sql, options: { sweep?: boolean } = {}): HotState {
  const timer = options.sweep
    ? setInterval(() => {
      sweepExpired(sql).catch((err) => log("warn", "hot-state sweep failed", { error: String(err) }));
    }, SWEEP_EVERY_MS)
    : undefined;
  const counters = new PostgresCounters(sql);
  return {
    counters,
    idempotency: new PostgresIdempotency(sql),
    otpSessions: new PostgresRecords(sql, "otp_sessions"),
    records: (kind) => new PostgresRecords(sql, kind),
    sendState: new PostgresSendState(sql),
    atomically: (work) => postgresAtomically(sql, work),
    async close() {
      clearInterval(timer);
      await counters.close();
    },
  };
}

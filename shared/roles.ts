import type { Config } from "./config.ts";
import { log } from "./log.ts";

/** The roles one process runs (see main.ts): `main.ts` runs all three, each `<role>/main.ts` one. */
export interface Roles {
  /** The REST endpoints except OTP (api/). */
  api: boolean;
  /** The OTP endpoints (otp/). */
  otp: boolean;
  /** The queue consumer (worker/). */
  worker: boolean;
}

/** Every role, in one process: the default for a container and for Deno Deploy. */
export const ALL_ROLES: Roles = { api: true, otp: true, worker: true };

/**
 * The configuration of a process that runs some roles, not all, beside processes that run the others.
 * - It needs `DATABASE_URL`: the embedded Postgres lives inside one process and its data folder must
 *   not be opened by two, so the roles' processes could not share it. Throws otherwise.
 * - On a local KV file (not Deno Deploy's KV) queues do not cross processes by themselves: a worker
 *   process sees other processes' jobs because its queue wakes itself every second (shared/engine/kv/queue.ts),
 *   and jobs wait up to about a second more than in one process. The processes also take turns on the
 *   SQLite file's lock: the API alone beside a worker accepted half of what main.ts does, and some KV
 *   commits failed with "database is locked" (docs/deployment.md, "One process, or one role per process"). Logged
 *   as a warning.
 * - Without the worker, burst deferral is off (`SEND_DEFER_RATE` 0): it exists to leave this process's
 *   CPU to accepting while its own worker waits, and here no worker shares the process.
 */
export function singleRoleConfig(config: Config, roles: Roles): Config {
  const names = (Object.keys(roles) as (keyof Roles)[]).filter((role) => roles[role]).join(", ");
  if (!config.DATABASE_URL) {
    throw new Error(
      `Cannot run the ${names} role alone on the embedded Postgres: it serves one process only. ` +
        "Set DATABASE_URL to the server the other roles use, or run main.ts for all roles in one process",
    );
  }
  if (!config.DENO_DEPLOYMENT_ID && config.KV_PATH) {
    log(
      "warn",
      `${names} running without the other roles on a local KV file: queue jobs reach a worker process ` +
        "only because it wakes its own queue every second (shared/engine/kv/queue.ts), and processes writing one KV file " +
        "take turns on its lock (under load, commits wait and some fail with 'database is locked'); " +
        "run main.ts for all roles in one process",
      { kv_path: config.KV_PATH },
    );
  }
  return roles.worker ? config : { ...config, SEND_DEFER_RATE: 0 };
}

/** singleRoleConfig for a process's entry point: a configuration it refuses ends the process (exit 2). */
export function singleRoleConfigOrExit(config: Config, roles: Roles): Config {
  try {
    return singleRoleConfig(config, roles);
  } catch (err) {
    log("error", (err as Error).message);
    Deno.exit(2);
  }
}

import type { Config } from "../config.ts";
import type { Sql } from "../db.ts";
import type { KvCommitter } from "../kv.ts";
import { kvHotState } from "./kv/hot_state.ts";
import { KvQueue } from "./kv/queue.ts";
import { PgBossQueue } from "./pg_boss_queue.ts";
import type { HotState } from "./ports.ts";
import { postgresHotState } from "./postgres/hot_state.ts";
import type { JobQueue } from "./queue.ts";
import type { SendState } from "./send_state.ts";

/** What either engine's hot state is built on. */
export interface EngineParts {
  kv: Deno.Kv;
  committer: KvCommitter;
  sql: Sql;
}

/** The hot-state ports of the configured engine. */
export function openHotState(config: Config, parts: EngineParts): HotState {
  return config.ENGINE === "postgres"
    ? postgresHotState(parts.sql, { sweep: true })
    : kvHotState(parts.kv, parts.committer);
}

/**
 * The job queue of the configured engine: Deno KV's own queue, or pg-boss on the database (started:
 * its schema installed or migrated).
 */
export async function openQueue(
  config: Config,
  parts: EngineParts,
  options: { queueSchema?: string; sendState?: SendState } = {},
): Promise<JobQueue<{ type: string }>> {
  if (config.ENGINE === "postgres") {
    const sendState = options.sendState;
    return await PgBossQueue.start(parts.sql, {
      ...(options.queueSchema ? { schema: options.queueSchema } : {}),
      ...(sendState ? { onGivenUp: (triggerId, jobId) => sendState.markGivenUp(triggerId, jobId) } : {}),
    });
  }
  // Only a local KV file keeps the jobs of a crashed process waiting, and needs a tick to see others' jobs.
  const localFile = Boolean(config.KV_PATH) && config.KV_PATH !== ":memory:" && !config.DENO_DEPLOYMENT_ID;
  return new KvQueue(parts.kv, parts.committer, { localFile });
}

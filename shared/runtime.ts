import { KeyCache } from "./api_keys.ts";
import type { Config } from "./config.ts";
import { connectDatabase, type Database } from "./db.ts";
import { type Deps, hotStateDeps } from "./deps.ts";
import { KvCommitter, openKv } from "./kv.ts";
import { migrate } from "./migrate.ts";
import { createProviders } from "./providers/registry.ts";
import { openHotState, openQueue } from "./engine/select.ts";

/** The running service's dependencies and how to release them. */
export interface Runtime {
  deps: Deps;
  database: Database;
  close(): Promise<void>;
}

interface RuntimeOptions {
  /** Postgres schema to use (tests). */
  schema?: string;
  /**
   * The schema pg-boss keeps its jobs in with ENGINE=postgres (default "pgboss"): test processes that
   * share a server each take their own, so that none runs another's jobs against the wrong schema.
   */
  queueSchema?: string;
  now?: () => number;
}

/** Opens the database (migrated) and KV, and builds the shared dependencies. */
export async function startRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const database = await connectDatabase(config, { schema: options.schema });
  await migrate(database.sql);
  const kv = await openKv(kvPath(config));
  const committer = new KvCommitter(kv);
  const parts = { kv, committer, sql: database.sql };
  const hot = openHotState(config, parts);
  const queue = await openQueue(config, parts, { queueSchema: options.queueSchema, sendState: hot.sendState });
  const deps: Deps = {
    config,
    sql: database.sql,
    kv,
    committer,
    ...hotStateDeps(hot),
    queue,
    keys: new KeyCache(),
    providers: createProviders(config, database.sql),
    now: options.now ?? Date.now,
  };
  return {
    deps,
    database,
    async close() {
      await queue.stop();
      await hot.close();
      kv.close();
      await database.close();
    },
  };
}

/**
 * Where the process's Deno KV is: with ENGINE=postgres nothing may live there (replicas share only
 * the database), so it is in memory and a state left on KV by mistake shows at once, not on one host;
 * on Deno Deploy, the platform's; else the configured file.
 */
function kvPath(config: Config): string | undefined {
  if (config.ENGINE === "postgres") return ":memory:";
  return config.DENO_DEPLOYMENT_ID ? undefined : config.KV_PATH;
}

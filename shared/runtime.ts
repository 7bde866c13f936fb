import { KeyCache } from "./api_keys.ts";
import type { Config } from "./config.ts";
import { connectDatabase, type Database } from "./db.ts";
import type { Deps } from "./deps.ts";
import { KvCommitter, openKv } from "./kv.ts";
import { migrate } from "./migrate.ts";
import { createProviders } from "./providers/registry.ts";
import { assertEngineReady, openHotState, openQueue } from "./engine/select.ts";

/** The running service's dependencies and how to release them. */
export interface Runtime {
  deps: Deps;
  database: Database;
  close(): Promise<void>;
}

interface RuntimeOptions {
  /** Postgres schema to use (tests). */
  schema?: string;
  now?: () => number;
}

/** Opens the database (migrated) and KV, and builds the shared dependencies. */
export async function startRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  assertEngineReady(config);
  const database = await connectDatabase(config, { schema: options.schema });
  await migrate(database.sql);
  const kv = await openKv(config.DENO_DEPLOYMENT_ID ? undefined : config.KV_PATH);
  const committer = new KvCommitter(kv);
  const parts = { kv, committer, sql: database.sql };
  const hot = openHotState(config, parts);
  const queue = await openQueue(config, parts);
  const deps: Deps = {
    config,
    sql: database.sql,
    kv,
    committer,
    counter: hot.counters,
    idempotency: hot.idempotency,
    otpSessions: hot.otpSessions,
    sendState: hot.sendState,
    atomically: hot.atomically,
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

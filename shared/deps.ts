import type { Config } from "./config.ts";
import type { Sql } from "./db.ts";
import type { KeyCache } from "./api_keys.ts";
import type { KvCommitter } from "./kv.ts";
import type { Providers } from "./providers/registry.ts";
import type { WindowCounter } from "./window_counter.ts";

/** Everything a role needs at run time, built once by the entry point (or a test). */
export interface Deps {
  config: Config;
  sql: Sql;
  kv: Deno.Kv;
  /** Group-commits KV writes of concurrent requests. */
  committer: KvCommitter;
  /** Fixed-window counters (rate limits), written to KV in groups. */
  counter: WindowCounter;
  /** API keys looked up recently. */
  keys: KeyCache;
  /** The provider of each channel. */
  providers: Providers;
  /** Milliseconds since the epoch; tests inject a clock. */
  now: () => number;
}

/** A team, as the request context carries it. */
export interface Team {
  id: string;
  name: string;
  plan: "free" | "pro" | "plus" | "enterprise";
}

/** The API key of the request (never the key itself). */
export interface ApiKey {
  id: string;
  prefix: string;
  kind: "sk_live" | "sk_test" | "pk_live" | "pk_test";
  /** Secret (sk_) rather than publishable (pk_). */
  secret: boolean;
  /** Test keys are sandbox: outbox only, never charged. */
  test: boolean;
}

import type { Config } from "./config.ts";
import type { Sql } from "./db.ts";
import type { KeyCache } from "./api_keys.ts";
import type { KvCommitter } from "./kv.ts";
import type { Providers } from "./providers/registry.ts";
import type { ExpiringRecords, HotState, IdempotencyStore, WindowCounters } from "./engine/ports.ts";
import type { JobQueue } from "./engine/queue.ts";
import type { SendState } from "./engine/send_state.ts";

/** Everything a role needs at run time, built once by the entry point (or a test). */
export interface Deps {
  config: Config;
  sql: Sql;
  kv: Deno.Kv;
  /** Group-commits KV writes of concurrent requests. */
  committer: KvCommitter;
  /** Counters over windows (rate limits, OTP send limits), in the engine's hot state. */
  counter: WindowCounters;
  /** Idempotency-Key records, in the engine's hot state. */
  idempotency: IdempotencyStore;
  /** OTP sessions (per team) with their active index, in the engine's hot state. */
  otpSessions: ExpiringRecords;
  /** Hot-state records of each kind (HotState.records), in the engine's hot state. */
  records: HotState["records"];
  /** The state of each send while it runs: trigger records, counts, dispatch cursors (one port, both engines). */
  sendState: SendState;
  /** Runs a unit of work on the engine: its record writes and jobs commit together (HotState.atomically). */
  atomically: HotState["atomically"];
  /** The engine's job queue (each job is one of worker/jobs.ts, told apart by `type`). */
  queue: JobQueue<{ type: string }>;
  /** API keys looked up recently. */
  keys: KeyCache;
  /** The provider of each channel. */
  providers: Providers;
  /** Milliseconds since the epoch; tests inject a clock. */
  now: () => number;
  /**
   * Looks up a name's TXT records (a domain's verification token); Deno.resolveDns when absent. Tests
   * inject one that answers without the internet.
   */
  resolveTxt?: (name: string) => Promise<string[][]>;
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

/** The Deps fields an engine's hot state provides (one place, so that no port is left out). */
export function hotStateDeps(hot: HotState) {
  return {
    counter: hot.counters,
    idempotency: hot.idempotency,
    otpSessions: hot.otpSessions,
    records: hot.records,
    sendState: hot.sendState,
    atomically: hot.atomically,
  } satisfies Partial<Deps>;
}

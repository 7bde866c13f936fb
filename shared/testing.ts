import type { Config } from "./config.ts";
import type { Db } from "./db.ts";
import { loadConfig } from "./config.ts";
import { type Deps, hotStateDeps, type Team } from "./deps.ts";
import { kvHotState } from "./engine/kv/hot_state.ts";
import { KvQueue } from "./engine/kv/queue.ts";
import { KvCommitter } from "./kv.ts";
import { setLogLevel } from "./log.ts";
import { type Runtime, startRuntime } from "./runtime.ts";
import { generateSecretKey } from "./secret_box.ts";
import { createTeam, type TeamKeys } from "./teams.ts";

let shared: Promise<Runtime> | undefined;

const TEST_CHANNEL_ACCOUNTS_KEY = generateSecretKey();

/** The configuration tests run with: in-memory KV and Postgres unless DATABASE_URL is set. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig(),
    KV_PATH: ":memory:",
    PGLITE_DIR: "memory://",
    DEMO_SEED: false,
    LOG_LEVEL: "silent",
    ADMIN_TOKEN: "test-admin-token-0123456789",
    OTP_TOKEN_SECRET: "test-otp-secret-0123456789abcdef",
    // Generated per test process: channel accounts stored by tests need no key of their own.
    CHANNEL_ACCOUNTS_KEY: TEST_CHANNEL_ACCOUNTS_KEY,
    // The suite's sends go to the outbox and check the wallet: billed as a provider would bill them.
    BILL_OUTBOX: true,
    ...overrides,
  };
}

/**
 * One runtime per test process (starting Postgres takes seconds): PGlite in memory, or a fresh
 * schema of DATABASE_URL's server so that concurrent runs never see each other's rows.
 * Tests isolate themselves by making their own team (`testTeam`).
 */
export function testRuntime(): Promise<Runtime> {
  shared ??= (async () => {
    const config = testConfig();
    setLogLevel(config.LOG_LEVEL);
    const schema = config.DATABASE_URL ? `test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}` : undefined;
    return await startRuntime(config, { schema, queueSchema: schema && `${schema}_jobs` });
  })();
  return shared;
}

/** Deps of the shared runtime, optionally with other settings (a small rate limit …). */
export async function testDeps(overrides: Partial<Config> = {}): Promise<Deps> {
  const { deps } = await testRuntime();
  return { ...deps, config: { ...deps.config, ...overrides } };
}

/**
 * `base` on a KV database of the test's own (`kv`, in memory): its group commit, hot state and job
 * queue too, so that the jobs the test enqueues (alone or in a unit of work) are seen, and run, only
 * by what listens to `kv`.
 */
export function onKv(base: Deps, kv: Deno.Kv): Deps {
  const committer = new KvCommitter(kv);
  const hot = kvHotState(kv, committer);
  return {
    ...base,
    // The engine the test runs on is Deno KV, whatever the suite's ENGINE.
    config: { ...base.config, ENGINE: "kv" },
    kv,
    committer,
    queue: new KvQueue(kv, committer),
    ...hotStateDeps(hot),
  };
}

/** A new team with its keys: each test works in a team of its own. */
export async function testTeam(deps: Deps, plan: Team["plan"] = "pro"): Promise<{ team: Team; keys: TeamKeys }> {
  return await createTeam(deps.sql, deps.config, { name: `team-${crypto.randomUUID().slice(0, 8)}`, plan });
}

/** A test on the shared database: its connections outlive a single test, so sanitizers are off. */
export function dbTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, fn, sanitizeOps: false, sanitizeResources: false });
}

/**
 * A test of a mechanism only the Deno KV engine has (the burst spool): with ENGINE=postgres it is
 * skipped, saying so in its name.
 */
export function kvEngineTest(name: string, fn: () => Promise<void>): void {
  const skipped = testConfig().ENGINE !== "kv";
  Deno.test({
    name: skipped ? `${name} (Deno KV only: skipped with ENGINE=postgres)` : name,
    ignore: skipped,
    fn,
    sanitizeOps: false,
    sanitizeResources: false,
  });
}

/** A random email, unique across runs. */
export function randomEmail(prefix = "user"): string {
  return `${prefix}.${crypto.randomUUID().slice(0, 12)}@example.com`;
}

/** JSON request helper for `app.request()`. */
export function jsonRequest(method: string, body?: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method,
    headers: { "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

/** `db`, counting the statements sent through it (tagged-template calls). */
export function countingDb<D extends Db>(db: D): { db: D; statements: () => number } {
  let statements = 0;
  const proxy = new Proxy(db, {
    apply(target, self, args) {
      statements++;
      return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, self, args);
    },
  });
  return { db: proxy, statements: () => statements };
}

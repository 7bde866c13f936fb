/**
 * What a rate-limit hit and an idempotency claim cost on each hot-state engine: ops/s of the ports
 * with 64 callers at once, the engines alternated (`--rounds`). KV on a file (one fsync a commit, as
 * in production); Postgres on DATABASE_URL's server, else the embedded PGlite.
 *
 *   deno run -A bench/hot_state.ts [--rounds=2] [--seconds=3]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test deno run -A bench/hot_state.ts
 *
 * `--middleware` measures instead the two middlewares as a request meets them (rateLimit, then
 * idempotency on a POST with a new Idempotency-Key, a handler answering 201) through `app.request()`
 * on the configured runtime: run it on two checkouts to compare them.
 */
import { parseArgs } from "node:util";
import { Hono } from "hono";
import { loadConfig } from "../shared/config.ts";
import type { Deps } from "../shared/deps.ts";
import { idempotency } from "../shared/http/idempotency.ts";
import { rateLimit } from "../shared/http/rate_limit.ts";
import type { AppEnv } from "../shared/http/env.ts";
import { setLogLevel } from "../shared/log.ts";
import { startRuntime } from "../shared/runtime.ts";

const CALLERS = 64;
const HOUR_MS = 3_600_000;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "2" },
    seconds: { type: "string", default: "3" },
    middleware: { type: "boolean" },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);

/** Ops/s of `op` run by CALLERS callers at once for `seconds`. */
async function rate(op: (i: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    while (performance.now() < end) await op(done++);
  }));
  return done / ((performance.now() - start) / 1000);
}

async function openRuntime() {
  const dir = await Deno.makeTempDir({ prefix: "hot-state-bench-" });
  const config = { ...loadConfig(), KV_PATH: `${dir}/kv.sqlite3`, PGLITE_DIR: "memory://", DEMO_SEED: false };
  setLogLevel("warn");
  const schema = config.DATABASE_URL ? `bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}` : undefined;
  const runtime = await startRuntime({ ...config, RATE_LIMIT_PRO: 1_000_000_000 }, { schema });
  return {
    runtime,
    async close() {
      if (schema) await runtime.deps.sql`drop schema ${runtime.deps.sql(schema)} cascade`;
      await runtime.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The ports of each engine, on one runtime's KV file and database. */
async function measurePorts(deps: Deps, db: string): Promise<void> {
  const { kvHotState } = await import("../shared/engine/kv/hot_state.ts");
  const { postgresHotState } = await import("../shared/engine/postgres/hot_state.ts");
  const engines = { kv: kvHotState(deps.kv, deps.committer), [`postgres (${db})`]: postgresHotState(deps.sql) };
  const run = crypto.randomUUID();
  // 1,000 API keys, as many teams' requests would spread; each window is read once per process
  // (its first hit waits for that read), which is left out of the rate.
  const subjects = Array.from({ length: 1000 }, (_, i) => `${run}-${i}`);
  const now = Date.now();
  for (const hot of Object.values(engines)) {
    await Promise.all(subjects.map((subject) => hot.counters.hit("api", subject, 1e9, HOUR_MS, now)));
  }
  for (let round = 1; round <= rounds; round++) {
    for (const [name, hot] of Object.entries(engines)) {
      const hits = await rate((i) => hot.counters.hit("api", subjects[i % 1000], 1e9, HOUR_MS, now));
      await hot.counters.flush();
      const claims = await rate((i) =>
        hot.idempotency.claim(run, `${name}-${round}-${i}`, { fingerprint: "f", inFlightMs: 60_000 })
      );
      const answer = { status: 201, contentType: "application/json", body: '{"id":"x"}' };
      const cycles = await rate(async (i) => {
        const key = `${name}-${round}-cycle-${i}`;
        await hot.idempotency.claim(run, key, { fingerprint: "f", inFlightMs: 60_000 });
        await hot.idempotency.complete(run, key, { fingerprint: "f", answer, ttlMs: 86_400_000 });
      });
      console.log(
        `round ${round} ${name.padEnd(20)} rate-limit hit ${fmt(hits)}/s  claim ${fmt(claims)}/s  claim+complete ${
          fmt(cycles)
        }/s`,
      );
    }
  }
  for (const hot of Object.values(engines)) await hot.close();
}

/** The rateLimit and idempotency middlewares on a POST with a new key, as the running service has them. */
async function measureMiddleware(deps: Deps): Promise<void> {
  const app = new Hono<AppEnv>();
  const team = { id: crypto.randomUUID(), name: "bench", plan: "pro" as const };
  const apiKey = { id: crypto.randomUUID(), prefix: "sk_live_b", kind: "sk_live" as const, secret: true, test: false };
  app.use("*", async (c, next) => {
    c.set("team", team);
    c.set("apiKey", apiKey);
    await next();
  });
  app.use("*", rateLimit(deps), idempotency(deps));
  app.post("/", (c) => c.json({ ok: true }, 201));
  const run = crypto.randomUUID();
  for (let round = 1; round <= rounds; round++) {
    const perSecond = await rate(async (i) => {
      const res = await app.request("/", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Idempotency-Key": `${run}-${round}-${i}` },
        body: '{"a":1}',
      });
      if (res.status !== 201) throw new Error(`status ${res.status}`);
      await res.body?.cancel();
    });
    console.log(`round ${round} middleware (rateLimit + idempotency, new key) ${fmt(perSecond)} req/s`);
  }
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

const { runtime, close } = await openRuntime();
try {
  console.log(`${CALLERS} callers, ${seconds} s a measurement, database ${runtime.database.kind}`);
  if (values.middleware) await measureMiddleware(runtime.deps);
  else await measurePorts(runtime.deps, runtime.database.kind);
} finally {
  await close();
}

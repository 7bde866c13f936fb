import { createRoute, z } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { ForbiddenError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { registry } from "../../shared/metrics.ts";
import { tag } from "../../shared/http/openapi.ts";

const Health = z.object({
  status: z.enum(["ok", "unavailable"]),
  engine: z.enum(["kv", "postgres"]),
  database: z.boolean(),
  /** Only with ENGINE=kv: with ENGINE=postgres the database holds the queue and the hot state too. */
  kv: z.boolean().optional(),
}).openapi("Health");

/**
 * How long /healthz waits for the database (and KV): with the server away, postgres.js keeps a
 * query waiting for a connection while it retries with back-off (up to 20 s), so without a limit
 * the check would hang rather than answer 503.
 */
const HEALTH_TIMEOUT_MS = 5_000;

/** True when `check` succeeds within `ms`. */
async function answersWithin(check: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([check.then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /healthz`: 200 when what the engine keeps its state in answers (the database, and with
 * ENGINE=kv Deno KV), else 503, so that a load balancer takes a replica out while its database is
 * away; `GET /metrics`: Prometheus text.
 */
export function systemRoutes(deps: Deps) {
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "get",
      path: "/healthz",
      tags: tag("System"),
      summary: "Health check",
      description:
        "200 when the database (and with ENGINE=kv the key-value store) answers, 503 otherwise; needs no key.",
      responses: {
        200: { description: "Healthy", content: { "application/json": { schema: Health } } },
        503: { description: "Unhealthy", content: { "application/json": { schema: Health } } },
      },
    }),
    async (c) => {
      const engine = deps.config.ENGINE;
      const [database, kv] = await Promise.all([
        answersWithin(deps.sql`select 1`.execute(), HEALTH_TIMEOUT_MS),
        engine === "kv" ? answersWithin(deps.kv.get(["health"]), HEALTH_TIMEOUT_MS) : undefined,
      ]);
      const ok = database && kv !== false;
      const status = ok ? "ok" as const : "unavailable" as const;
      return c.json({ status, engine, database, ...(kv === undefined ? {} : { kv }) }, ok ? 200 : 503);
    },
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/metrics",
      tags: tag("System"),
      summary: "Metrics in the Prometheus text format (Bearer METRICS_TOKEN when that is set)",
      description:
        "Requests by route and status, queue jobs, deliveries by channel and outcome, provider latency and queue " +
        "lag, for Prometheus to scrape.",
      security: [],
      responses: {
        200: { description: "Metrics", content: { "text/plain": { schema: z.string() } } },
        403: { description: "Missing or wrong METRICS_TOKEN" },
      },
    }),
    (c) => {
      const token = deps.config.METRICS_TOKEN;
      if (token && c.req.header("authorization") !== `Bearer ${token}`) {
        throw new ForbiddenError("Invalid metrics token", "invalid_metrics_token");
      }
      return c.body(registry.render(), 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
    },
  );
  return app;
}

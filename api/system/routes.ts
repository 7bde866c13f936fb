import { createRoute, z } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";

const Health = z.object({ status: z.enum(["ok", "unavailable"]), database: z.boolean(), kv: z.boolean() }).openapi(
  "Health",
);

/** `GET /healthz`: 200 when the database and KV answer, else 503. */
export function systemRoutes(deps: Deps) {
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "get",
      path: "/healthz",
      tags: ["System"],
      summary: "Health check",
      responses: {
        200: { description: "Healthy", content: { "application/json": { schema: Health } } },
        503: { description: "Unhealthy", content: { "application/json": { schema: Health } } },
      },
    }),
    async (c) => {
      const [database, kv] = await Promise.all([
        deps.sql`select 1`.then(() => true, () => false),
        deps.kv.get(["health"]).then(() => true, () => false),
      ]);
      const ok = database && kv;
      return c.json({ status: ok ? "ok" as const : "unavailable" as const, database, kv }, ok ? 200 : 503);
    },
  );
  return app;
}

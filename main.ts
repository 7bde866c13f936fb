import { Scalar } from "@scalar/hono-api-reference";
import { adminRoutes } from "./api/admin/routes.ts";
import { contactsRoutes } from "./api/contacts/routes.ts";
import { systemRoutes } from "./api/system/routes.ts";
import { otpRoutes } from "./otp/routes.ts";
import { loadConfig } from "./shared/config.ts";
import type { Deps } from "./shared/deps.ts";
import { createBaseApp } from "./shared/http/app.ts";
import { apiKeyAuth } from "./shared/http/auth.ts";
import { idempotency } from "./shared/http/idempotency.ts";
import { rateLimit } from "./shared/http/rate_limit.ts";
import { log, setLogLevel } from "./shared/log.ts";
import { startRuntime } from "./shared/runtime.ts";
import { ensureAdminToken, seedDemo } from "./shared/seed.ts";

/** The whole service (every role) as one Hono app. */
export function createService(deps: Deps) {
  const app = createBaseApp();
  // The document is public: registered before the key check so that it answers first.
  app.doc31("/api/v1/openapi.json", {
    openapi: "3.1.0",
    info: { title: "Multi-channel messaging API", version: "1.0.0" },
    security: [{ ApiKey: [] }],
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
  });
  app.get("/docs", Scalar({ url: "/api/v1/openapi.json", pageTitle: "Messaging API reference" }));
  app.use("/api/v1/*", apiKeyAuth(deps, deps.keys), rateLimit(deps, deps.counter), idempotency(deps));
  app.route("/", systemRoutes(deps));
  app.route("/admin/v1", adminRoutes(deps));
  app.route("/api/v1/contacts", contactsRoutes(deps));
  app.route("/api/v1/otp", otpRoutes(deps));
  return app;
}

async function main(): Promise<void> {
  const config = ensureAdminToken(loadConfig());
  setLogLevel(config.LOG_LEVEL);
  const runtime = await startRuntime(config);
  await seedDemo(runtime.deps);
  const app = createService(runtime.deps);
  const server = Deno.serve({
    port: config.PORT,
    hostname: config.HOST,
    onListen: ({ hostname, port }) => log("info", "listening", { url: `http://${hostname}:${port}` }),
  }, app.fetch);
  const shutdown = async () => {
    log("info", "shutting down");
    await server.shutdown();
    await runtime.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", shutdown);
  Deno.addSignalListener("SIGTERM", shutdown);
}

if (import.meta.main) await main();

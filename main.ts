import { adminRoutes } from "./api/admin/routes.ts";
import { dashboardRoutes } from "./api/dashboard/routes.tsx";
import { contactsRoutes } from "./api/contacts/routes.ts";
import { eventsRoutes } from "./api/events/routes.ts";
import { inboundRoutes } from "./api/inbound/routes.ts";
import { messagesRoutes } from "./api/messages/routes.ts";
import { pushRoutes } from "./api/push/routes.ts";
import { smsRoutes } from "./api/sms/routes.ts";
import { docsRoutes } from "./api/system/docs.ts";
import { systemRoutes } from "./api/system/routes.ts";
import { templatesRoutes } from "./api/templates/routes.ts";
import { triggersRoutes } from "./api/triggers/routes.ts";
import { webhooksRoutes } from "./api/webhooks/routes.ts";
import { whatsappRoutes } from "./api/whatsapp/routes.ts";
import { workflowsRoutes } from "./api/workflows/routes.ts";
import { triggerWorkflowRoutes } from "./api/workflows/trigger_routes.ts";
import { otpRoutes, verifyAnswersCountAttempts } from "./otp/routes.ts";
import { loadConfig } from "./shared/config.ts";
import type { Deps } from "./shared/deps.ts";
import { createBaseApp } from "./shared/http/app.ts";
import { apiKeyAuth, keyScope } from "./shared/http/auth.ts";
import { cors } from "./shared/http/cors.ts";
import { serveDocument } from "./shared/http/openapi.ts";
import { idempotency } from "./shared/http/idempotency.ts";
import { rateLimit } from "./shared/http/rate_limit.ts";
import { log, setLogLevel } from "./shared/log.ts";
import { waitForJobs } from "./shared/metrics.ts";
import { ALL_ROLES, type Roles, singleRoleConfigOrExit } from "./shared/roles.ts";
import { startRuntime } from "./shared/runtime.ts";
import { logMessageRoutes } from "./shared/providers/registry.ts";
import { ensureAdminToken, ensureDemoChannelAccountsKey, seedDemo } from "./shared/seed.ts";
import { registerDrainCron, workerDrainTarget } from "./worker/drain.ts";
import { startWorker } from "./worker/queue.ts";

/** What `GET /` answers: where the reference, the document and the API are. */
export const ROOT_LINKS = {
  message: "Multi-channel messaging API: see /docs for the interactive reference",
  docs: "/docs",
  openapi: "/api/v1/openapi.json",
  api: "/api/v1",
  health: "/healthz",
} as const;

/** The HTTP face of `roles` as one Hono app (every role by default); health, metrics and docs in each. */
export function createService(deps: Deps, roles: Roles = ALL_ROLES) {
  const app = createBaseApp();
  // The document is public: registered before the key check so that it answers first.
  serveDocument(app, "/api/v1/openapi.json");
  app.route("/", docsRoutes("/api/v1/openapi.json"));
  // Someone who opens the bare address (a browser, curl) is pointed at the reference.
  app.get("/", (c) => c.json(ROOT_LINKS));
  // Provider callbacks carry no API key (each is checked by its provider's signature): mounted before
  // the key check, like the document above, so that they answer first.
  if (roles.api) app.route("/api/v1/inbound", inboundRoutes(deps));
  app.use("/api/v1/*", cors);
  if (roles.otp) app.use("/api/v1/otp/verify", verifyAnswersCountAttempts);
  app.use(
    "/api/v1/*",
    apiKeyAuth(deps),
    rateLimit(deps),
    keyScope(deps),
    idempotency(deps),
  );
  app.route("/", systemRoutes(deps));
  if (roles.otp) app.route("/api/v1/otp", otpRoutes(deps));
  if (!roles.api) return app;
  app.route("/admin/v1", adminRoutes(deps));
  app.route("/dashboard", dashboardRoutes(deps));
  app.route("/api/v1/contacts", contactsRoutes(deps));
  app.route("/api/v1/workflows", workflowsRoutes(deps));
  app.route("/api/v1/events", eventsRoutes(deps));
  app.route("/api/v1/webhooks", webhooksRoutes(deps));
  app.route("/api/v1/messages", messagesRoutes(deps));
  app.route("/api/v1/sms", smsRoutes(deps));
  app.route("/api/v1/whatsapp", whatsappRoutes(deps));
  app.route("/api/v1/push", pushRoutes(deps));
  app.route("/api/v1/triggers", triggersRoutes(deps));
  app.route("/api/v1/triggers", triggerWorkflowRoutes(deps));
  app.route("/api/v1/templates", templatesRoutes(deps));
  return app;
}

/**
 * Runs `roles` in this process until SIGINT/SIGTERM: the HTTP roles behind one server, the worker
 * on the engine's job queue. A process without every role is checked first (see singleRoleConfig).
 */
export async function serve(roles: Roles): Promise<void> {
  const loaded = loadConfig();
  setLogLevel(loaded.LOG_LEVEL);
  const all = roles.api && roles.otp && roles.worker;
  const config = ensureDemoChannelAccountsKey(
    ensureAdminToken(all ? loaded : singleRoleConfigOrExit(loaded, roles)),
  );
  const starting = startRuntime(config);
  // Before anything is awaited: Deno Deploy finds crons by running the module's top level.
  if (roles.worker) registerDrainCron(config, () => starting.then((runtime) => workerDrainTarget(runtime.deps)));
  const runtime = await starting;
  logMessageRoutes(config);
  await seedDemo(runtime.deps);
  if (roles.worker) startWorker(runtime.deps);
  const app = createService(runtime.deps, roles);
  const server = Deno.serve({
    port: config.PORT,
    hostname: config.HOST,
    onListen: ({ hostname, port }) => log("info", "listening", { url: `http://${hostname}:${port}`, roles }),
  }, app.fetch);
  // Graceful shutdown: stop accepting connections, let in-flight requests and queue jobs finish (up to
  // SHUTDOWN_TIMEOUT_MS in all), then close the queue, KV and the pool. A job cut off at the deadline
  // stays in the queue and runs again (after the restart, or on another replica), so no accepted work is lost.
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    const deadline = Date.now() + config.SHUTDOWN_TIMEOUT_MS;
    log("info", "shutting down", { timeout_ms: config.SHUTDOWN_TIMEOUT_MS });
    const requestsDone = await Promise.race([
      server.shutdown().then(() => true),
      new Promise<false>((resolve) => setTimeout(resolve, config.SHUTDOWN_TIMEOUT_MS, false)),
    ]);
    const jobsDone = await waitForJobs(Math.max(0, deadline - Date.now()));
    if (!requestsDone || !jobsDone) log("warn", "shutdown deadline reached", { requestsDone, jobsDone });
    await runtime.close();
    log("info", "stopped");
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", shutdown);
  Deno.addSignalListener("SIGTERM", shutdown);
}

if (import.meta.main) await serve(ALL_ROLES);

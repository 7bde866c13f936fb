/**
 * The worker role alone: `deno run -A worker/main.ts`, beside `api/main.ts` and `otp/main.ts` on the same
 * DATABASE_URL and KV. It listens to the KV queue and runs every job.
 * On a local KV file, another process's enqueues are seen only on Deno KV's 60 s fallback poll, so
 * this process enqueues a no-op `tick` to itself every second to wake its listener; and queues only
 * cross processes where the KV backend delivers them (Deno Deploy): `main.ts` (all roles in one
 * process) is the default.
 */
import { loadConfig } from "../shared/config.ts";
import { log, setLogLevel } from "../shared/log.ts";
import { waitForJobs } from "../shared/metrics.ts";
import { singleRoleConfigOrExit } from "../shared/roles.ts";
import { startRuntime } from "../shared/runtime.ts";
import { startWorker } from "./queue.ts";

const TICK_MS = 1_000;

async function main(): Promise<void> {
  const loaded = loadConfig();
  setLogLevel(loaded.LOG_LEVEL);
  const config = singleRoleConfigOrExit(loaded, { api: false, otp: false, worker: true });
  const runtime = await startRuntime(config);
  startWorker(runtime.deps);
  const tick = setInterval(() => {
    runtime.deps.kv.enqueue({ type: "tick" }).catch((err) => log("warn", "tick failed", { error: String(err) }));
  }, TICK_MS);
  log("info", "worker started");
  const shutdown = async () => {
    clearInterval(tick);
    const done = await waitForJobs(config.SHUTDOWN_TIMEOUT_MS);
    if (!done) log("warn", "shutdown deadline reached with jobs in flight");
    await runtime.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", shutdown);
  Deno.addSignalListener("SIGTERM", shutdown);
}

if (import.meta.main) await main();

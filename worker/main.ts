/**
 * The worker role alone: `deno run -A worker/main.ts`, beside `api/main.ts` and `otp/main.ts` on the same
 * DATABASE_URL (and, with ENGINE=kv, the same KV file). It consumes the job queue and runs every job.
 * With ENGINE=postgres the queue is pg-boss: any number of these processes share it, on any host.
 * With ENGINE=kv a local KV file's queue delivers only inside a process that holds it: the KV adapter
 * wakes this process's listener every second so that it sees other processes' jobs (see
 * shared/engine/kv/queue.ts), and `main.ts` (all roles in one process) is the default.
 */
import { loadConfig } from "../shared/config.ts";
import { log, setLogLevel } from "../shared/log.ts";
import { waitForJobs } from "../shared/metrics.ts";
import { singleRoleConfigOrExit } from "../shared/roles.ts";
import { startRuntime } from "../shared/runtime.ts";
import { startWorker } from "./queue.ts";

async function main(): Promise<void> {
  const loaded = loadConfig();
  setLogLevel(loaded.LOG_LEVEL);
  const config = singleRoleConfigOrExit(loaded, { api: false, otp: false, worker: true });
  const runtime = await startRuntime(config);
  startWorker(runtime.deps);
  log("info", "worker started");
  const shutdown = async () => {
    const done = await waitForJobs(config.SHUTDOWN_TIMEOUT_MS);
    if (!done) log("warn", "shutdown deadline reached with jobs in flight");
    await runtime.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", shutdown);
  Deno.addSignalListener("SIGTERM", shutdown);
}

if (import.meta.main) await main();

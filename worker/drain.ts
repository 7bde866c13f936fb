/**
 * The queue drain a `Deno.cron` runs once a minute where nothing keeps a consumer up. On Deno Deploy
 * an instance runs only while it has traffic, so with no requests a delayed job, a retry, or a job
 * whose instance was stopped would wait for the next one. A cron execution starts an instance (it is
 * an inbound request), whose worker then consumes; the drain holds the execution open while jobs are
 * running or about to fall due, so that the instance is not stopped under them.
 */
import type { Config } from "../shared/config.ts";
import type { Deps } from "../shared/deps.ts";
import { pgBossBacklog } from "../shared/engine/pg_boss_backlog.ts";
import { log } from "../shared/log.ts";
import { startWorker } from "./queue.ts";

/** The cron's name: one per process (Deno.cron refuses a second of the same name). */
export const DRAIN_CRON_NAME = "drain queue";
/** Every minute: the finest schedule Deno.cron and Deno Deploy allow. */
export const DRAIN_CRON_SCHEDULE = "* * * * *";
/**
 * The most one drain works. Under the cron's minute: Deno Deploy skips an execution that would
 * overlap the previous one, so a drain that ran the whole minute would cost the next.
 */
export const DRAIN_BUDGET_MS = 50_000;
/** How often the drain asks the queue what is left. */
const CHECK_EVERY_MS = 1_000;

/** What a drain needs: this process's consumer, and the queue's count of what is left. */
export interface DrainTarget {
  /** Starts this process's consumer unless it runs already. */
  consume(): void;
  /** Jobs running on any consumer, or waiting and due within `withinMs`. */
  backlog(withinMs: number): Promise<number>;
}

/** How a drain ended: nothing left to do within its budget, or the budget spent. */
export type DrainOutcome = "idle" | "budget";

/** How long a drain may work, and how often it looks. */
export interface DrainOptions {
  budgetMs?: number;
  checkEveryMs?: number;
}

/**
 * Starts the consumer and waits until no job is running or due within what is left of the budget
 * (a job due in 20 s is waited for, and run, when the budget has 30 s left), or the budget is spent.
 * Jobs still running then go on while the instance lives; if it is stopped, pg-boss's heartbeat
 * hands them to the next consumer.
 */
export async function drainQueue(target: DrainTarget, options: DrainOptions = {}): Promise<DrainOutcome> {
  const { budgetMs = DRAIN_BUDGET_MS, checkEveryMs = CHECK_EVERY_MS } = options;
  const deadline = Date.now() + budgetMs;
  target.consume();
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return "budget";
    if (await target.backlog(left) === 0) return "idle";
    await new Promise((resolve) => setTimeout(resolve, Math.min(checkEveryMs, left)));
  }
}

/** The drain of this process's worker on the pg-boss queue. */
export function workerDrainTarget(deps: Deps): DrainTarget {
  return {
    consume: () => {
      startWorker(deps);
    },
    backlog: (withinMs) => pgBossBacklog(deps.sql, withinMs),
  };
}

/**
 * Whether this process drains on a cron: only with ENGINE=postgres (Deno KV's queue wakes its own
 * listener, and the new Deno Deploy has none); on Deno Deploy unless QUEUE_DRAIN_CRON=0, elsewhere
 * when QUEUE_DRAIN_CRON=1.
 */
export function drainCronWanted(config: Config): boolean {
  if (config.ENGINE !== "postgres") return false;
  return config.QUEUE_DRAIN_CRON ?? Boolean(config.DENO_DEPLOYMENT_ID);
}

/**
 * Registers the drain cron when wanted, and answers whether it did. Call it before anything is awaited
 * at start-up: Deno Deploy learns a revision's crons by running its module's top level, and ignores
 * one registered once the server runs. `target` is asked for at each run, so a run that comes while
 * the process is still starting waits for it; the budget counts from the run's start.
 */
export function registerDrainCron(
  config: Config,
  target: () => Promise<DrainTarget>,
  options: { signal?: AbortSignal } = {},
): boolean {
  if (!drainCronWanted(config)) return false;
  Deno.cron(DRAIN_CRON_NAME, DRAIN_CRON_SCHEDULE, { signal: options.signal }, async () => {
    const started = Date.now();
    const drain = await target();
    const outcome = await drainQueue(drain, { budgetMs: DRAIN_BUDGET_MS - (Date.now() - started) });
    log("info", "queue drained", { outcome, duration_ms: Date.now() - started });
  });
  return true;
}

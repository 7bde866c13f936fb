import type { Deps } from "../shared/deps.ts";
import { log } from "../shared/log.ts";
import { trackJob } from "../shared/metrics.ts";
import { handleDeliverBatch } from "./batch.ts";
import { holdDuringBurst } from "../shared/sending/pressure.ts";
import { drainSpool, SPOOL_SLOT_MS, sweepSpool } from "../shared/engine/kv/spool.ts";
import { EVENT_SWEEP_EVERY_MS, sweepEventOutbox } from "../shared/event_outbox.ts";
import { createWorkerContext, type WorkerContext } from "./context.ts";
import { handleDispatch } from "./dispatch.ts";
import { handleFallback } from "./fallback.ts";
import { type Job, JobSchema } from "./jobs.ts";
import { handleSendGroup, handleSendStored } from "./sends.ts";
import { handleWorkflowFanout, handleWorkflowStarts, handleWorkflowStartStored } from "./workflows/start.ts";
import { handleWorkflowStep } from "./workflows/step.ts";
import { deliverWebhooks } from "./webhooks.ts";

/** A running worker: its context, for tests that call handlers directly. */
export interface Worker {
  context: WorkerContext;
  /** Stops the worker's timers (the queue's consumer ends when the runtime closes the queue). */
  stop(): void;
}

/** How a worker is started. */
export interface WorkerOptions {
  /** How often the worker looks for spool pages older than SPOOL_SWEEP_AGE_MS (ms). */
  spoolSweepMs?: number;
}

const workers = new WeakMap<Deps["queue"], Worker>();

/**
 * Starts consuming `deps.queue` (Deno KV allows one listener per database; pg-boss consumes on
 * every replica). Idempotent per queue: the service and tests may both call it; the first call's
 * deps serve every job. What an engine needs to consume safely (KV's in-flight journal and tick,
 * pg-boss's heartbeats) is inside its queue adapter.
 */
export function startWorker(deps: Deps, options: WorkerOptions = {}): Worker {
  const running = workers.get(deps.queue);
  if (running) return running;
  // Spool pages their drain job missed (see spool.ts) are moved to the queue here.
  const sweep = setInterval(() => {
    sweepSpool(deps.kv, Date.now()).catch((err) => log("warn", "spool sweep failed", { error: String(err) }));
  }, options.spoolSweepMs ?? SPOOL_SWEEP_MS);
  Deno.unrefTimer(sweep);
  // Webhook events a stopped process staged and did not relay (see event_outbox.ts) are relayed here.
  const eventSweep = setInterval(() => {
    sweepEventOutbox(deps).catch((err) => log("warn", "webhook event sweep failed", { error: String(err) }));
  }, EVENT_SWEEP_EVERY_MS);
  Deno.unrefTimer(eventSweep);
  const worker: Worker = {
    context: createWorkerContext(deps),
    stop() {
      clearInterval(sweep);
      clearInterval(eventSweep);
      workers.delete(deps.queue);
    },
  };
  workers.set(deps.queue, worker);
  deps.queue.listen((message) => handleMessage(worker.context, message)).catch((err) => {
    log("error", "queue listener stopped", { error: String(err) });
  });
  return worker;
}

/** How often the worker looks for spool pages older than SPOOL_SWEEP_AGE_MS. */
const SPOOL_SWEEP_MS = 10_000;

/** Parses a queue message and runs its job; a message that is no job is logged and dropped. */
export async function handleMessage(w: WorkerContext, message: unknown): Promise<void> {
  const parsed = JobSchema.safeParse(message);
  if (!parsed.success) {
    log("error", "queue message is not a job", { issues: parsed.error.issues.slice(0, 3).map((i) => i.message) });
    return;
  }
  const job = parsed.data;
  const info = {
    type: job.type,
    job_id: "id" in job ? job.id : undefined,
    due_at: "due_at" in job ? job.due_at : undefined,
  };
  await trackJob(info, () => runJob(w, job));
}

/** Runs one job (exhaustive over the job types). Throwing makes the queue deliver it again later. */
export async function runJob(w: WorkerContext, job: Job): Promise<void> {
  switch (job.type) {
    case "send-group":
      // A first try joins the next merged pass; a retry (after a temporary failure) runs alone.
      return job.attempt > 0 ? await w.deliveries.run(() => handleSendGroup(w, job)) : await w.groups.add(job);
    case "send-stored":
      return await w.deliveries.run(() => handleSendStored(w, job));
    case "dispatch":
      return await handleDispatch(w, job);
    case "deliver-batch":
      return await w.deliveries.run(() => handleDeliverBatch(w, job));
    case "workflow-starts":
      // Starting runs steps against Postgres: during a burst of accepts it waits, as sends do.
      await holdDuringBurst(w.defer, Date.now());
      return await handleWorkflowStarts(w, job);
    case "workflow-start-stored":
      return await handleWorkflowStartStored(w, job);
    case "workflow-fanout":
      return await handleWorkflowFanout(w, job);
    case "workflow-step":
      return await w.deliveries.run(() => handleWorkflowStep(w, job));
    case "fallback":
      return await w.deliveries.run(() => handleFallback(w, job));
    case "webhook-deliver":
      return await deliverWebhooks(w.deps, job);
    case "spool-drain":
      // The slot's jobs run here, as the queue would hand them over, once the burst is over (at most
      // SEND_DEFER_MAX_MS after the slot).
      await holdDuringBurst(w.defer, job.slot * SPOOL_SLOT_MS);
      await drainSpool(w.deps.kv, job.slot, (spooled) => handleMessage(w, spooled));
      return;
    default: {
      const unknown: never = job;
      throw new Error(`Cannot run job: unknown type ${(unknown as { type: string }).type}`);
    }
  }
}

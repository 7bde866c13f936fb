import { log } from "../shared/log.ts";
import { deliveredCounts, maybeCompleteExecution } from "./complete.ts";
import { executionContext, specOf, type WorkerContext } from "./context.ts";
import { deliver } from "./deliver.ts";
import type { DeliverBatchJob } from "./jobs.ts";
import { prepareMessages } from "./prepare.ts";
import { contactsInRange, devicesOf } from "./recipients.ts";
import { MAX_DELIVERY_ATTEMPTS, nextTryDelay } from "../shared/backoff.ts";

/**
 * The `deliver-batch` job: one page of a fan-out. Loads the page's contacts (fresh: preferences as
 * they are now), prepares, delivers (see deliver.ts), then adds the batch's outcome to its
 * execution's running counts in the unit of work that marks the batch counted, so a redelivered
 * batch is never counted twice. Messages meeting a temporary provider failure keep the batch open: the job
 * is enqueued again later, and only the messages still pending are sent then.
 */
export async function handleDeliverBatch(w: WorkerContext, job: DeliverBatchJob): Promise<void> {
  const { deps } = w;
  const batch = { triggerId: job.trigger_id, executionId: job.execution_id, batchNo: job.batch_no };
  if (await deps.sendState.batchCounted(job.execution_id, job.batch_no)) {
    await maybeCompleteExecution(w, job.trigger_id, job.execution_id);
    return;
  }
  const spec = await specOf(w, job.trigger_id);
  const execution = spec?.executions.find((e) => e.id === job.execution_id);
  if (!spec || !execution) {
    log("error", "deliver-batch: send not found", { trigger_id: job.trigger_id, execution_id: job.execution_id });
    return;
  }
  const contacts = await contactsInRange(
    deps.sql,
    execution.content.channel,
    spec.team_id,
    job.filter,
    job.after,
    job.until,
  );
  const devices = execution.content.channel === "push"
    ? await devicesOf(deps.sql, contacts.map((c) => c.id))
    : undefined;
  const ctx = await executionContext(w, spec, execution, job.batch_no);
  const prepared = await prepareMessages(
    ctx,
    contacts.map((contact) => ({ kind: "contact", contact, devices: devices?.get(contact.id) ?? [] })),
  );
  if (ctx.missing.size > 0) {
    log("warn", "template variables missing", { trigger_id: spec.trigger_id, variables: [...ctx.missing] });
  }
  const result = await deliver(deps, prepared, { lastAttempt: job.attempt + 1 >= MAX_DELIVERY_ATTEMPTS });
  if (result.pending > 0) {
    const retry: DeliverBatchJob = { ...job, id: crypto.randomUUID(), attempt: job.attempt + 1 };
    await deps.queue.enqueue(retry, {
      delayMs: nextTryDelay(job.attempt, result.retryAfterMs),
      forTrigger: job.trigger_id,
    });
    return;
  }
  const counts = (await deliveredCounts(deps.sql, prepared, result, [job.execution_id], job.batch_no))
    .get(job.execution_id);
  const c = counts ?? { total_contacts: 0, sent: 0, failed: 0, filtered: 0 };
  // False when a redelivery of this batch counted it first: nothing is added twice.
  await deps.atomically((unit) => deps.sendState.countBatch(batch, c, unit));
  await maybeCompleteExecution(w, job.trigger_id, job.execution_id);
}

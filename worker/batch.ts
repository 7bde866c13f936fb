import { log } from "../shared/log.ts";
import { deliveredCounts, maybeCompleteExecution } from "./complete.ts";
import { executionContext, specOf, type WorkerContext } from "./context.ts";
import { countBatch } from "./fallback_chain.ts";
import { deliver } from "./deliver.ts";
import type { DeliverBatchJob } from "./jobs.ts";
import { prepareMessages } from "./prepare.ts";
import { contactsInRange, devicesOf, type RecipientContact } from "./recipients.ts";
import type { ExecutionSpec, SendSpec } from "../shared/sending/spec.ts";
import { MAX_DELIVERY_ATTEMPTS } from "../shared/backoff.ts";
import { nextPass, settleEndedHolds } from "./hold.ts";

/**
 * The `deliver-batch` job: one page of a fan-out. Loads the page's contacts (fresh: preferences as
 * they are now), prepares, delivers (see deliver.ts), then adds the batch's outcome to its
 * execution's running counts in the unit of work that marks the batch counted, so a redelivered
 * batch is never counted twice. Messages meeting a temporary provider failure keep the batch open: the job
 * is enqueued again later, and only the messages still pending are sent then.
 */
export async function handleDeliverBatch(w: WorkerContext, job: DeliverBatchJob): Promise<void> {
  await runPageJob(
    w,
    job,
    (spec, execution) =>
      contactsInRange(w.deps.sql, execution.content.channel, spec.team_id, job.filter, job.after, job.until),
  );
}

/**
 * Runs a job delivering a page of an execution's contacts (`contactsOf` finds them): nothing once
 * its batch is counted but the execution's completion; else {@linkcode deliverPage}.
 */
export async function runPageJob<J extends PageJob>(
  w: WorkerContext,
  job: J,
  contactsOf: (spec: SendSpec, execution: ExecutionSpec) => Promise<RecipientContact[]>,
): Promise<void> {
  const { deps } = w;
  if (await deps.sendState.batchCounted(job.execution_id, job.batch_no)) {
    await maybeCompleteExecution(w, job.trigger_id, job.execution_id);
    return;
  }
  const spec = await specOf(w, job.trigger_id);
  const execution = spec?.executions.find((e) => e.id === job.execution_id);
  if (!spec || !execution) {
    log("error", `${job.type}: send not found`, { trigger_id: job.trigger_id, execution_id: job.execution_id });
    return;
  }
  await deliverPage(w, spec, execution, job, await contactsOf(spec, execution));
}

/** A job delivering one page of an execution's contacts: a fan-out's `deliver-batch`, or a `fallback`. */
interface PageJob {
  type: "deliver-batch" | "fallback";
  id: string;
  trigger_id: string;
  execution_id: string;
  batch_no: number;
  after: string | null;
  until: string | null;
  /** Earlier tries that met a temporary provider failure. */
  attempt: number;
}

/**
 * Prepares and delivers an execution's messages to a page of contacts, then counts the page as the
 * job's batch (with the fallback jobs it calls for: fallback_chain.ts) and completes the execution
 * if it was the last; messages still pending send the job again later, with one more attempt.
 */
async function deliverPage<J extends PageJob>(
  w: WorkerContext,
  spec: SendSpec,
  execution: ExecutionSpec,
  job: J,
  contacts: RecipientContact[],
): Promise<void> {
  const { deps } = w;
  const batch = { triggerId: job.trigger_id, executionId: job.execution_id, batchNo: job.batch_no };
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
  await settleEndedHolds(deps, prepared, result, { executionIds: [job.execution_id], batchNo: job.batch_no });
  // Temporary failures and quiet-hours holds keep the batch open until a later pass settles them.
  const next = nextPass(result, job.attempt, deps.now());
  if (next) {
    const retry: J = { ...job, id: crypto.randomUUID(), attempt: next.attempt };
    await deps.queue.enqueue(retry, { delayMs: next.delayMs, forTrigger: job.trigger_id });
    return;
  }
  const counts = (await deliveredCounts(deps.sql, prepared, result, [job.execution_id], job.batch_no))
    .get(job.execution_id);
  const c = counts ?? { total_contacts: 0, sent: 0, failed: 0, filtered: 0 };
  // Lost when a redelivery of this batch counted it first: nothing is added (or fallen back) twice.
  await countBatch(w, spec, batch, c, { after: job.after, until: job.until });
  await maybeCompleteExecution(w, job.trigger_id, job.execution_id);
}

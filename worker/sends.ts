import { log } from "../shared/log.ts";
import { JOB_BACKOFF_MS, MAX_DELIVERY_ATTEMPTS, nextTryDelay } from "../shared/backoff.ts";
import { queueDelay, type SendGroupJob, type SendStoredJob } from "../shared/sending/jobs.ts";
import { insertTriggers, loadSpec, markProcessing } from "../shared/sending/records.ts";
import { isSingleRecipient, type SendSpec } from "../shared/sending/spec.ts";
import { newTriggerRecord } from "../shared/sending/trigger_record.ts";
import { completeSingles, deliveredCounts, type DispatchState, maybeCompleteExecution } from "./complete.ts";
import { executionContext, type WorkerContext } from "./context.ts";
import { deliver, deliveryKey } from "./deliver.ts";
import { continueWithFallbacks } from "./fallback.ts";
import { hasFallbacks, startState } from "./fallback_chain.ts";
import type { DispatchJob } from "./jobs.ts";
import { nextPass, settleEndedHolds } from "./hold.ts";
import { type Prepared, prepareMessages, type Unit } from "./prepare.ts";
import { contactsByIds, type Device, devicesOf, type RecipientContact, recipientFilter } from "./recipients.ts";

/**
 * The `send-group` job: sends accepted together. Delivers the single-recipient ones in one pass
 * (one INSERT, one charge per team, one outbox write) and records them in Postgres once finished;
 * records the others (fan-outs) as processing and starts their dispatch.
 */
export async function handleSendGroup(w: WorkerContext, job: SendGroupJob & { attempt: number }): Promise<void> {
  try {
    await runGroup(w, job);
  } catch (err) {
    if (job.sends.length === 1) throw err;
    await runAlone(w, job, err);
  }
}

/**
 * A group failed (a value the database refuses, say): its sends are run again one by one, so that
 * one team's bad send never holds back the others accepted with it. A send that fails alone goes
 * back to the queue as a job of its own, with its own retries and, when they run out, its trigger
 * shown failed (its undelivered key). Running a send again sends nothing twice (deliveries are
 * keyed; a fan-out starts once).
 */
async function runAlone(w: WorkerContext, job: SendGroupJob & { attempt: number }, err: unknown): Promise<void> {
  log("warn", "send group failed: its sends run one by one", { sends: job.sends.length, error: String(err) });
  for (const spec of job.sends) {
    try {
      await runGroup(w, { ...job, sends: [spec] });
    } catch (alone) {
      log("error", "send failed", { trigger_id: spec.trigger_id, team_id: spec.team_id, error: String(alone) });
      const retry: SendGroupJob = { type: "send-group", id: crypto.randomUUID(), sends: [spec], attempt: job.attempt };
      await w.deps.queue.enqueue(retry, { delayMs: JOB_BACKOFF_MS[0], forTrigger: spec.trigger_id });
    }
  }
}

async function runGroup(w: WorkerContext, job: SendGroupJob & { attempt: number }): Promise<void> {
  const { deps } = w;
  const startedAt = deps.now();
  const fanOuts = job.sends.filter((s) => !isSingleRecipient(s.recipient));
  if (fanOuts.length > 0) {
    await insertTriggers(deps.sql, fanOuts, "processing", startedAt);
    for (const spec of fanOuts) await startFanOut(w, spec, startedAt);
  }
  const singles = job.sends.filter((s) => isSingleRecipient(s.recipient));
  if (singles.length > 0) await deliverSingles(w, singles, job.attempt, startedAt);
}

/**
 * The `send-stored` job: a send recorded in Postgres (scheduled or large), now due. One that fires
 * before it is due (a schedule past the queue's 30-day delay) enqueues itself again for the rest.
 */
export async function handleSendStored(w: WorkerContext, job: SendStoredJob): Promise<void> {
  const now = w.deps.now();
  if (job.due_at !== undefined && job.due_at > now) {
    const next: SendStoredJob = { ...job, id: crypto.randomUUID() };
    await w.deps.queue.enqueue(next, { delayMs: queueDelay(job.due_at, now), forTrigger: job.trigger_id });
    return;
  }
  const triggerId = job.trigger_id;
  const spec = await loadSpec(w.deps.sql, triggerId);
  if (!spec) {
    log("warn", "send-stored: no such trigger", { trigger_id: triggerId });
    return;
  }
  await w.deps.sql`update triggers set status = 'processing', started_at = coalesce(started_at, now())
    where id = ${triggerId} and status = 'pending'`;
  await handleSendGroup(w, { type: "send-group", id: crypto.randomUUID(), sends: [spec], attempt: 0 });
}

/** Delivers sends that each name one recipient; sends meeting a temporary failure are tried again later. */
async function deliverSingles(w: WorkerContext, specs: SendSpec[], attempt: number, startedAt: number) {
  const { deps } = w;
  const contactIds = new Map<string, string[]>();
  for (const s of specs) {
    if (s.recipient.type === "contact") {
      contactIds.set(s.team_id, [...contactIds.get(s.team_id) ?? [], s.recipient.contact_id]);
    }
  }
  const contacts = new Map<string, RecipientContact>();
  for (const [teamId, ids] of contactIds) {
    for (const c of await contactsByIds(deps.sql, teamId, ids)) contacts.set(c.id, c);
  }
  const pushContacts = specs.filter((s) => s.recipient.type === "contact" && hasPush(s))
    .map((s) => (s.recipient as { contact_id: string }).contact_id);
  const devices = await devicesOf(deps.sql, pushContacts);

  const prepared: Prepared[] = [];
  // Missing template variables render empty; logged once per job, not once per message.
  const missing = new Map<string, Set<string>>();
  for (const spec of specs) {
    for (const execution of spec.executions) {
      // A fallback execution sends only to whom the one before it did not reach (worker/fallback.ts).
      if (execution.fallback_for !== undefined) continue;
      const ctx = await executionContext(w, spec, execution, 0);
      const unit = unitOf(spec, contacts, devices);
      const messages = unit
        ? await prepareMessages(ctx, [unit])
        : await prepareMessages({ ...ctx, failure: "Contact not found" }, [missingContact(spec)]);
      prepared.push(...messages);
      for (const name of ctx.missing) missing.set(name, (missing.get(name) ?? new Set()).add(spec.trigger_id));
    }
  }
  if (missing.size > 0) {
    log("warn", "template variables missing", {
      variables: Object.fromEntries([...missing].map(([name, triggers]) => [name, triggers.size])),
      trigger_ids: [...new Set([...missing.values()].flatMap((t) => [...t]))].slice(0, 5),
    });
  }
  const result = await deliver(deps, prepared, { lastAttempt: attempt + 1 >= MAX_DELIVERY_ATTEMPTS });
  await settleEndedHolds(deps, prepared, result, { executionIds: specs.flatMap((s) => s.executions.map((e) => e.id)) });

  const unfinished = new Set<string>();
  for (const p of prepared) {
    if (result.statuses.get(deliveryKey(p)) === "pending") unfinished.add(p.trigger_id);
  }
  const finished = specs.filter((s) => !unfinished.has(s.trigger_id));
  const counts = await deliveredCounts(
    deps.sql,
    prepared,
    result,
    finished.flatMap((s) => s.executions.map((e) => e.id)),
  );
  await completeSingles(w, finished.filter((s) => !hasFallbacks(s)), counts, startedAt);
  await continueWithFallbacks(w, finished.filter(hasFallbacks), counts, startedAt);
  if (unfinished.size > 0) {
    const waiting = specs.filter((s) => unfinished.has(s.trigger_id));
    // Recorded as processing, so that the execution lists show a send waiting for its provider's
    // retry (hours, at most) and not only once it is finished.
    await insertTriggers(deps.sql, waiting, "processing", startedAt);
    await markProcessing(deps.sql, [...unfinished], startedAt);
    // After a temporary failure's delay, or at the end of a quiet-hours hold (worker/hold.ts).
    const next = nextPass(result, attempt, deps.now()) ??
      { attempt: attempt + 1, delayMs: nextTryDelay(attempt, result.retryAfterMs) };
    const retry: SendGroupJob = {
      type: "send-group",
      id: crypto.randomUUID(),
      sends: waiting,
      attempt: next.attempt,
    };
    await deps.queue.enqueue(retry, { delayMs: next.delayMs });
  }
}

function hasPush(spec: SendSpec): boolean {
  return spec.executions.some((e) => e.content.channel === "push");
}

/** The recipient unit of a single-recipient send; undefined when its contact is gone. */
function unitOf(
  spec: SendSpec,
  contacts: Map<string, RecipientContact>,
  devices: Map<string, Device[]>,
): Unit | undefined {
  const r = spec.recipient;
  if (r.type === "direct") {
    return {
      kind: "direct",
      address: r.address,
      info: { first_name: r.first_name, last_name: r.last_name },
      platform: r.platform,
    };
  }
  if (r.type !== "contact") throw new Error(`Not a single-recipient send: ${r.type}`);
  const contact = contacts.get(r.contact_id);
  if (!contact) return undefined;
  return { kind: "contact", contact, devices: devices.get(contact.id) ?? [] };
}

/** A direct unit standing for a deleted contact, so that its one message is recorded as failed. */
function missingContact(spec: SendSpec): Unit {
  const id = spec.recipient.type === "contact" ? spec.recipient.contact_id : "unknown";
  return { kind: "direct", address: id, info: {} };
}

/**
 * Starts the fan-out of a send to a tag, a segment or everyone: records where each execution's
 * paging starts and enqueues its `dispatch` job, in one unit of work that checks it was not started
 * already (a redelivered group starts nothing twice).
 */
async function startFanOut(w: WorkerContext, spec: SendSpec, startedAt: number): Promise<void> {
  const { deps } = w;
  // A segment deleted since the send was accepted reaches no one.
  const filter = await recipientFilter(deps.sql, spec.team_id, spec.recipient);
  const started = await deps.atomically(async (unit) => {
    // The trigger's own record, live from now on (counts, completion); written with the dispatch
    // states, whose checks make a redelivered group start (and reset) nothing.
    await deps.sendState.putTrigger({ ...newTriggerRecord(spec), status: "processing", started_at: startedAt }, unit);
    for (const execution of spec.executions) {
      const state: DispatchState = startState(spec, execution, {
        team_id: spec.team_id,
        filter: filter ?? {},
        after: null,
        batches: 0,
        done: !filter,
        paced: execution.content.channel === "push" && execution.content.category === "promotional",
      });
      await deps.sendState.putDispatch(execution.id, state, null, unit);
      if (!filter || execution.fallback_for !== undefined) continue;
      const job: DispatchJob = {
        type: "dispatch",
        id: crypto.randomUUID(),
        trigger_id: spec.trigger_id,
        execution_id: execution.id,
      };
      await deps.queue.enqueue(job, { forTrigger: spec.trigger_id }, unit);
    }
  });
  if (!started || !filter) {
    // Started by an earlier delivery of this job: make sure it can still complete.
    for (const e of spec.executions) await maybeCompleteExecution(w, spec.trigger_id, e.id);
  }
}

import { log } from "../../shared/log.ts";
import type { Db } from "../../shared/db.ts";
import { changeAndStage, relayEvents, type StagedEvent, type TeamEvent } from "../../shared/event_outbox.ts";
import { listenersOf } from "../../shared/webhook_events.ts";
import type { SendSpec } from "../../shared/sending/spec.ts";
import { completeTriggers } from "../../shared/workflows/complete.ts";
import type { StepRow, Workflow } from "../../shared/workflows/definitions.ts";
import { executionContext, type WorkerContext } from "../context.ts";
import { deliver, deliveryKey } from "../deliver.ts";
import { type Prepared, prepareMessages, type Unit } from "../prepare.ts";
import { contactsByIds } from "../recipients.ts";
import { MAX_DELIVERY_ATTEMPTS, nextTryDelay } from "../../shared/backoff.ts";
import { nextPass, settleEndedHolds } from "../hold.ts";
import { cachedRuns, cachedWorkflow } from "./cache.ts";
import type { WorkflowStepJob } from "./jobs.ts";
import { advance, type Claimed, claimStep, executionsPast, recordStepRuns, type StepRun } from "./queries.ts";
import { enqueueJobs, groupJobs, stepJobs } from "./schedule.ts";
import { type Channel, stepContent } from "./step_content.ts";
import { type ChannelOutcome, type ChannelRun, sendThroughChannels, type Waiting } from "./step_fallback.ts";
import { nextStep, type RunContext, stepDelayMs, stepIsActive, stepVariables } from "./variables.ts";

/**
 * The `workflow-step` job: runs one step of a workflow for a batch of executions (of one start or
 * of many). A job that fires before its due time (a delay chained past the queue's 30 days) waits
 * again. Only the executions whose current step is this one are taken (atomically), so a duplicate
 * or out-of-order job never runs a step twice nor skips one. The step's messages go through the
 * sending pipeline (preferences, rendering, charging, provider, message records) in one pass; then
 * each execution moves to its next step, whose job is enqueued with that step's delay, or finishes
 * (or first waits at the step for its WhatsApp message's delivery report: step_fallback.ts).
 */
export async function handleWorkflowStep(w: WorkerContext, job: WorkflowStepJob): Promise<void> {
  const { deps } = w;
  const now = deps.now();
  if (job.due_at > now) {
    await enqueueJobs(deps, [{ ...job, id: crypto.randomUUID() }]);
    return;
  }
  const workflow = await cachedWorkflow(w, job.workflow_id);
  if (!workflow) return; // Deleted since: its executions went with it.
  const claimed = await claimStep(deps.sql, job.execution_ids, job.step_order, now);
  if (claimed.length > 0) await runStep(w, workflow, job, claimed);
  if (claimed.length < job.execution_ids.length) await resume(w, job);
}

/**
 * For the executions of a job that are already past its step (the job is a redelivery), in case the
 * process stopped between moving them on and what follows: enqueues the current step of those still
 * running again (a duplicate job is harmless), and completes the triggers of those that finished
 * (completing a final trigger changes nothing). Without this, a trigger whose last executions
 * finished just before a stop stayed processing for good. Their `workflow.completed` events were
 * staged with the move (see moveOn): what the stop left, the outbox's sweep relays.
 */
async function resume(w: WorkerContext, job: WorkflowStepJob): Promise<void> {
  const { ahead, finishedTriggerIds } = await executionsPast(w.deps.sql, job.execution_ids, job.step_order);
  await enqueueJobs(w.deps, groupJobs(ahead));
  if (finishedTriggerIds.length > 0) await completeTriggers(w.deps, finishedTriggerIds);
}

/** Runs the step for the claimed executions, start by start, delivering all their messages in one pass. */
async function runStep(w: WorkerContext, workflow: Workflow, job: WorkflowStepJob, claimed: Claimed[]) {
  const { deps } = w;
  const runs = await cachedRuns(w, workflow.id, claimed.map((c) => c.trigger_id));
  const step = workflow.steps.find((s) => s.step_order === job.step_order);
  const toSend: Claimed[] = [];
  const skipped: Claimed[] = [];
  for (const c of claimed) {
    const run = runs.get(c.trigger_id);
    // The step was removed or switched off (for this start) since it was scheduled: go on with the next one.
    if (run && step && stepIsActive(run, step)) toSend.push(c);
    else skipped.push(c);
  }
  const outcome = step && toSend.length > 0
    ? await sendThroughChannels(
      step,
      toSend,
      (leg, todo) => sendStep(w, runs, step, todo, job, leg.channel_type),
      deps.now(),
    )
    : { runs: [] as StepRun[], pending: [] as string[], retryAfterMs: undefined, waiting: [] as Waiting[] };
  if (step) await recordStepRuns(deps.sql, workflow.id, step, outcome.runs);
  await enqueueJobs(deps, waitJobs(job, outcome.waiting));
  if (outcome.pending.length > 0) {
    // After a temporary failure's delay, or at the end of a quiet-hours hold (worker/hold.ts).
    const next = ("left" in outcome ? nextPass(outcome.left, job.attempt, deps.now()) : undefined) ??
      { attempt: job.attempt + 1, delayMs: nextTryDelay(job.attempt, outcome.retryAfterMs) };
    const retry = stepJobs({
      workflow_id: job.workflow_id,
      step_order: job.step_order,
      due_at: deps.now() + next.delayMs,
      attempt: next.attempt,
    }, outcome.pending);
    await enqueueJobs(deps, retry);
  }
  const done = new Set(outcome.runs.map((r) => r.execution_id));
  const moving = [...skipped, ...toSend.filter((c) => done.has(c.id))];
  await moveOn(w, workflow, runs, job.step_order, moving);
}

/**
 * The step jobs that run the step again for executions waiting for a delivery report, due when the
 * wait ends; the executions stay at the step (PROCESSING) until then, so the workflow goes on after.
 */
function waitJobs(job: WorkflowStepJob, waiting: Waiting[]): WorkflowStepJob[] {
  const byDue = new Map<number, string[]>();
  for (const { execution_id, due } of waiting) byDue.set(due, [...byDue.get(due) ?? [], execution_id]);
  return [...byDue].flatMap(([due, ids]) =>
    stepJobs({ workflow_id: job.workflow_id, step_order: job.step_order, due_at: due, attempt: job.attempt }, ids)
  );
}

/**
 * Moves executions past `stepOrder`: each to its next step for its start (scheduled with that step's
 * delay, one job per batch sharing step and due time), or to its end; then completes the triggers
 * whose executions are all finished. Each finished execution's `workflow.completed` is staged with
 * its move (event_outbox.ts) and relayed at the end.
 */
async function moveOn(
  w: WorkerContext,
  workflow: Workflow,
  runs: Map<string, RunContext>,
  stepOrder: number,
  executions: Claimed[],
) {
  const { deps } = w;
  const now = deps.now();
  const groups = new Map<string, { next?: { step_order: number; due: number }; ids: string[] }>();
  for (const e of executions) {
    const run = runs.get(e.trigger_id);
    const next = run && nextStep(run, workflow.steps, stepOrder);
    const target = next && run ? { step_order: next.step_order, due: now + stepDelayMs(run, next) } : undefined;
    const key = target ? `${target.step_order}\0${target.due}` : "end";
    const group = groups.get(key) ?? { next: target, ids: [] };
    group.ids.push(e.id);
    groups.set(key, group);
  }
  const listeners = await listenersOf(deps, [workflow.team_id]);
  const finishedTriggers = new Set<string>();
  const staged: StagedEvent[] = [];
  for (const { next, ids } of groups.values()) {
    if (next) {
      const moved = await advance(deps.sql, ids, stepOrder, next, now);
      const movedIds = moved.map((m) => m.id);
      await enqueueJobs(
        deps,
        stepJobs({ workflow_id: workflow.id, step_order: next.step_order, due_at: next.due }, movedIds),
      );
      continue;
    }
    // The end: each finished execution's `workflow.completed` is staged in the same transaction.
    const report = { team_id: workflow.team_id, type: "workflow.completed" } as const;
    const finish = async (db: Db) =>
      new Map((await advance(db, ids, stepOrder, undefined, now)).map((m) => [m.id, m.status]));
    const completed = (statuses: Map<string, string>) =>
      executions.filter((e) => statuses.has(e.id)).map((e) => executionCompleted(workflow, e, statuses.get(e.id)!));
    const statuses = await changeAndStage(deps, listeners, report, finish, completed, staged);
    for (const e of executions) if (statuses.has(e.id)) finishedTriggers.add(e.trigger_id);
  }
  if (finishedTriggers.size === 0) return;
  await completeTriggers(deps, [...finishedTriggers]);
  await relayEvents(deps, staged);
}

/** The `workflow.completed` event of an execution that finished with `status`. */
function executionCompleted(workflow: Workflow, e: Claimed, status: string): TeamEvent {
  return {
    team_id: workflow.team_id,
    type: "workflow.completed",
    data: {
      workflow_id: workflow.id,
      workflow_name: workflow.name,
      execution_id: e.id,
      trigger_id: e.trigger_id,
      contact_id: e.contact_id,
      status,
    },
  };
}

/**
 * A stable id for the pipeline execution that carries one step's messages of one start on one
 * channel: the pipeline records one message per (execution, recipient), so a step is sent once per
 * contact and channel (its own, then each fallback channel: step_fallback.ts).
 */
export async function stepExecutionId(triggerId: string, workflowId: string, step: StepRow): Promise<string> {
  const text = `workflow-step\0${triggerId}\0${workflowId}\0${step.step_order}\0${step.channel_type}`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  const hex = Array.from(digest.slice(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const STATUS = { sent: "SENT", failed: "FAILED", filtered: "FILTERED" } as const;

/**
 * Sends one step's messages on `channel` (its own channel or a fallback channel) to the claimed
 * executions' contacts through the pipeline (one delivery pass for every start of the batch, each rendered with its own variables), and answers what
 * happened to each (from the recorded messages), and the executions whose message met a temporary
 * failure and waits for another try.
 */
async function sendStep(
  w: WorkerContext,
  runs: Map<string, RunContext>,
  own: StepRow,
  claimed: Claimed[],
  job: WorkflowStepJob,
  channel: Channel = own.channel_type,
): Promise<ChannelOutcome> {
  const { deps } = w;
  const teamId = runs.get(claimed[0].trigger_id)!.team_id;
  const content = await stepContent(w, teamId, own, channel);
  const step = { ...own, channel_type: channel };
  const contactIds = claimed.flatMap((c) => (c.contact_id ? [c.contact_id] : []));
  const contacts = new Map((await contactsByIds(deps.sql, teamId, contactIds)).map((c) => [c.id, c]));
  const byTrigger = new Map<string, Claimed[]>();
  for (const c of claimed) byTrigger.set(c.trigger_id, [...byTrigger.get(c.trigger_id) ?? [], c]);
  const results: ChannelRun[] = [];
  const prepared: Prepared[] = [];
  /** The pipeline message keys of the claimed executions, their contact found or not. */
  const keys: { execution_id: string; recipient: string }[] = [];
  /** Our execution of each pipeline message key (pipeline execution and contact). */
  const executionOf = new Map<string, { id: string; contact_id: string }>();
  for (const [triggerId, group] of byTrigger) {
    const run = runs.get(triggerId)!;
    const executionId = await stepExecutionId(triggerId, run.workflow_id, step);
    const spec: SendSpec = {
      trigger_id: triggerId,
      job_id: job.id,
      team_id: run.team_id,
      sandbox: run.sandbox,
      trigger_type: step.channel_type,
      recipient_type: "workflow",
      recipient: { type: "all" },
      executions: [{ id: executionId, content }],
      variables: stepVariables(run, step),
      metadata: run.metadata,
      created_at: deps.now(),
      scheduled_for: null,
    };
    const units: Unit[] = [];
    for (const c of group) {
      if (c.contact_id) keys.push({ execution_id: executionId, recipient: c.contact_id });
      const contact = c.contact_id ? contacts.get(c.contact_id) : undefined;
      if (!contact) {
        results.push({
          execution_id: c.id,
          contact_id: c.contact_id,
          status: "FAILED",
          message_id: null,
          error: "Contact not found",
          cost_micros: 0,
        });
        continue;
      }
      units.push({ kind: "contact", contact });
      executionOf.set(`${executionId}\0${contact.id}`, { id: c.id, contact_id: contact.id });
    }
    const ctx = await executionContext(w, spec, spec.executions[0], step.step_order);
    prepared.push(...await prepareMessages(ctx, units));
    if (ctx.missing.size > 0) {
      log("warn", "template variables missing", { trigger_id: triggerId, variables: [...ctx.missing] });
    }
  }
  const delivered = await deliver(deps, prepared, { lastAttempt: job.attempt + 1 >= MAX_DELIVERY_ATTEMPTS });
  // A message held by quiet hours whose contact is no longer one (or is gone) when the hold ends:
  // filtered and refunded, so that it does not stay pending, charged.
  await settleEndedHolds(deps, prepared, delivered, {
    executionIds: [...new Set(keys.map((k) => k.execution_id))],
    keys,
  });
  const recorded = await deps.sql<
    {
      id: string;
      execution_id: string;
      recipient: string;
      status: string;
      error: string | null;
      cost_micros: number;
      sent_ms: number;
      delivery_status: string | null;
    }[]
  >`
    select m.id, m.execution_id, m.recipient, m.status, m.error, m.cost_micros, m.delivery_status,
      (extract(epoch from coalesce(m.sent_at, m.created_at)) * 1000)::float8 as sent_ms
    from messages m
    join unnest(${prepared.map((p) => p.execution_id)}::uuid[], ${prepared.map((p) => p.recipient)}::text[])
      as k(execution_id, recipient)
      on m.execution_id = k.execution_id and m.recipient = k.recipient`;
  const pending: string[] = [];
  for (const m of recorded) {
    const execution = executionOf.get(`${m.execution_id}\0${m.recipient}`);
    if (!execution) continue;
    const status = STATUS[m.status as keyof typeof STATUS];
    if (!status) {
      pending.push(execution.id);
      continue;
    }
    results.push({
      execution_id: execution.id,
      contact_id: execution.contact_id,
      status,
      message_id: m.id,
      error: m.error,
      cost_micros: m.cost_micros,
      sent_at: m.sent_ms,
      delivery_status: m.delivery_status,
    });
  }
  // A message Postgres refused to record (see deliverApart) has no row: its execution fails.
  const rows = new Set(recorded.map(deliveryKey));
  for (const p of prepared) {
    const key = deliveryKey(p);
    const execution = executionOf.get(key);
    if (!execution || rows.has(key) || delivered.statuses.get(key) !== "failed") continue;
    results.push({
      execution_id: execution.id,
      contact_id: execution.contact_id,
      status: "FAILED",
      message_id: null,
      error: "Cannot record the message",
      cost_micros: 0,
    });
  }
  return { runs: results, pending, retryAfterMs: delivered.retryAfterMs, left: delivered };
}

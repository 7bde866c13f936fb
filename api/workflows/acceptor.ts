import { asJson } from "../../shared/db.ts";
import type { Deps } from "../../shared/deps.ts";
import { Acceptor } from "../../shared/sending/acceptor.ts";
import { burstDeferral } from "../../shared/sending/pressure.ts";
import { type PendingEntry, pendingRecordOf } from "../../shared/sending/trigger_record.ts";
import {
  enqueueStoredStart,
  type WorkflowStartsJob,
  type WorkflowStartStoredJob,
} from "../../shared/workflows/jobs.ts";
import { triggerTypesOf, type WorkflowStart } from "../../shared/workflows/start.ts";

/**
 * The pending entry of a workflow trigger (see PendingEntry), in the shape GET /triggers/{id} reads,
 * so that the trigger answers at once (the worker records it in Postgres when it takes the start up).
 */
function pendingEntry(start: WorkflowStart): PendingEntry {
  return {
    id: start.trigger_id,
    team_id: start.team_id,
    ...triggerTypesOf(start),
    job_id: start.job_id,
    created_at: start.created_at,
    scheduled_for: start.scheduled_for,
    executions: [],
    // Read by GET /triggers/{id}/workflow until the worker records the run.
    workflow_id: start.workflow_id,
  };
}

/**
 * A scheduled start, or one too large for a queue message: recorded in Postgres, its pending
 * record kept under the trigger's own key (a page would expire before a distant schedule), and
 * enqueued by trigger id with its delay.
 */
async function acceptStored(deps: Deps, start: WorkflowStart): Promise<void> {
  const { sql } = deps;
  await sql`insert into triggers ${
    sql({
      id: start.trigger_id,
      team_id: start.team_id,
      ...triggerTypesOf(start),
      status: "pending",
      job_id: start.job_id,
      spec: asJson(start),
      sandbox: start.sandbox,
      scheduled_for: start.scheduled_for === null ? null : new Date(start.scheduled_for),
      created_at: new Date(start.created_at),
    })
  } on conflict (id) do nothing`;
  const due = start.scheduled_for ?? start.created_at;
  const job: WorkflowStartStoredJob = {
    type: "workflow-start-stored",
    id: crypto.randomUUID(),
    trigger_id: start.trigger_id,
    due_at: due,
  };
  const now = deps.now();
  const pending = { expected: null, ttlMs: Math.max(0, due - now) + PENDING_KEEP_MS, activeUntil: null };
  const committed = await deps.atomically(async (unit) => {
    await deps.records("send_triggers").put("", start.trigger_id, pendingRecordOf(pendingEntry(start)), pending, unit);
    await enqueueStoredStart(deps.queue, job, now, unit);
  });
  if (!committed) throw new Error(`Cannot accept workflow start: trigger ${start.trigger_id} is already recorded`);
}

/** How long a stored start's pending record is kept past its due time (the worker drops it on taking the start up). */
const PENDING_KEEP_MS = 7 * 86_400_000;

const acceptors = new WeakMap<Deno.Kv, Acceptor<WorkflowStart>>();

/**
 * The acceptor of workflow starts (API triggers and events), one per process and KV database: the
 * sending pipeline's group commit through the engine's ports, carrying `workflow-starts` jobs.
 */
export function workflowAcceptor(deps: Deps): Acceptor<WorkflowStart> {
  let acceptor = acceptors.get(deps.kv);
  if (!acceptor) {
    acceptor = new Acceptor<WorkflowStart>({
      pending: pendingEntry,
      groupJob: (id, starts): WorkflowStartsJob => ({ type: "workflow-starts", id, starts }),
      acceptStored: (start) => acceptStored(deps, start),
      deferral: burstDeferral(deps.config),
    }, { sendState: deps.sendState, queue: deps.queue });
    acceptors.set(deps.kv, acceptor);
  }
  return acceptor;
}

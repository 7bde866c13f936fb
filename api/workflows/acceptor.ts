import { asJson } from "../../shared/db.ts";
import type { Deps } from "../../shared/deps.ts";
import { JOB_BACKOFF_MS } from "../../shared/sending/acceptor.ts";
import { sendKeys } from "../../shared/sending/keys.ts";
import type { TriggerRecord } from "../../shared/sending/trigger_record.ts";
import type { WorkflowStartsJob, WorkflowStartStoredJob } from "../../shared/workflows/jobs.ts";
import { queueDelay } from "../../shared/workflows/queue.ts";
import type { WorkflowStart } from "../../shared/workflows/start.ts";

interface Waiting {
  start: WorkflowStart;
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Deno KV refuses a queue message over 64 KiB; keep well under it. */
const MESSAGE_BYTES = 56 * 1024;
/** What one group may carry: Deno KV allows 800 KiB a commit, and the committer may add other writers to it. */
const GROUP_BYTES = 200 * 1024;
const GROUP_STARTS = 400;

const encoder = new TextEncoder();

/**
 * The pending KV record of a workflow trigger, in the shape GET /triggers/{id} reads, so that the
 * trigger answers at once (the worker replaces it with the Postgres row when it takes the start up).
 */
function pendingRecord(start: WorkflowStart): TriggerRecord {
  const record = {
    id: start.trigger_id,
    team_id: start.team_id,
    flow_type: "workflow",
    trigger_type: start.source === "event" ? "event" : "workflow",
    recipient_type: start.source === "event" ? "event" : start.recipient?.type ?? "contact",
    job_id: start.job_id,
    status: "pending",
    created_at: start.created_at,
    started_at: null,
    completed_at: null,
    scheduled_for: start.scheduled_for,
    executions: [],
    // Read by GET /triggers/{id}/workflow until the worker records the run.
    workflow_id: start.workflow_id,
  };
  // The pipeline's record type names only its own flow; the reader takes any flow_type.
  return record as unknown as TriggerRecord;
}

/**
 * Group commit of accepted workflow starts (API triggers and events), beside the sending
 * pipeline's: starts accepted by concurrent requests share one KV commit (through the service's
 * committer) holding each trigger's pending record and the starts as a few `workflow-starts`
 * queue messages. No Postgres write, except for a scheduled start or one too large for a queue
 * message, which is recorded in Postgres and enqueued by trigger id with its delay.
 */
export class WorkflowAcceptor {
  #deps: Deps;
  #waiting: Waiting[] = [];
  #running = false;

  constructor(deps: Deps) {
    this.#deps = deps;
  }

  /** Accepts a start: resolves once its trigger record and its job are committed. */
  async accept(start: WorkflowStart): Promise<void> {
    const bytes = encoder.encode(JSON.stringify(start)).length;
    if (start.scheduled_for !== null || bytes > MESSAGE_BYTES) return await this.#acceptStored(start);
    await new Promise<void>((resolve, reject) => {
      this.#waiting.push({ start, bytes, resolve, reject });
      if (!this.#running) this.#drain();
    });
  }

  async #acceptStored(start: WorkflowStart): Promise<void> {
    const { sql, committer } = this.#deps;
    await sql`insert into triggers ${
      sql({
        id: start.trigger_id,
        team_id: start.team_id,
        flow_type: "workflow",
        trigger_type: start.source === "event" ? "event" : "workflow",
        status: "pending",
        recipient_type: start.source === "event" ? "event" : start.recipient?.type ?? null,
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
    await committer.commit((op) => {
      op.set(sendKeys.trigger(start.trigger_id), pendingRecord(start));
      op.enqueue(job, { delay: queueDelay(due, this.#deps.now()), backoffSchedule: JOB_BACKOFF_MS });
    }, 2);
  }

  async #drain(): Promise<void> {
    this.#running = true;
    // Let the requests of this tick join the first group.
    await Promise.resolve();
    try {
      while (this.#waiting.length > 0) {
        const group = this.#take();
        try {
          const messages = chunk(group);
          await this.#deps.committer.commit((op) => {
            for (const w of group) op.set(sendKeys.trigger(w.start.trigger_id), pendingRecord(w.start));
            for (const starts of messages) {
              const job: WorkflowStartsJob = { type: "workflow-starts", id: crypto.randomUUID(), starts };
              op.enqueue(job, { backoffSchedule: JOB_BACKOFF_MS });
            }
          }, group.length + messages.length);
          for (const w of group) w.resolve();
        } catch (err) {
          for (const w of group) w.reject(err);
        }
      }
    } finally {
      this.#running = false;
    }
  }

  /** The next group: as many waiting starts as one commit may carry. */
  #take(): Waiting[] {
    const group: Waiting[] = [];
    let bytes = 0;
    while (
      this.#waiting.length > 0 && group.length < GROUP_STARTS &&
      (group.length === 0 || bytes + this.#waiting[0].bytes <= GROUP_BYTES)
    ) {
      const next = this.#waiting.shift()!;
      bytes += next.bytes + 400;
      group.push(next);
    }
    return group;
  }
}

/** Splits a group's starts into queue messages of at most MESSAGE_BYTES each. */
function chunk(group: Waiting[]): WorkflowStart[][] {
  const out: WorkflowStart[][] = [];
  let current: WorkflowStart[] = [];
  let bytes = 0;
  for (const w of group) {
    if (current.length > 0 && bytes + w.bytes > MESSAGE_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(w.start);
    bytes += w.bytes + 8;
  }
  if (current.length > 0) out.push(current);
  return out;
}

const acceptors = new WeakMap<Deno.Kv, WorkflowAcceptor>();

/** The acceptor of a KV database (one per process and database). */
export function workflowAcceptor(deps: Deps): WorkflowAcceptor {
  let acceptor = acceptors.get(deps.kv);
  if (!acceptor) acceptors.set(deps.kv, acceptor = new WorkflowAcceptor(deps));
  return acceptor;
}

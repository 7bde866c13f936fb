import { JOB_BACKOFF_MS, queueDelay, storedJobOptions } from "../../shared/sending/jobs.ts";
import type { Deps } from "../../shared/deps.ts";
import type { WorkflowStartStoredJob } from "../../shared/workflows/jobs.ts";
import type { WorkflowFanoutJob, WorkflowStepJob } from "./jobs.ts";

/** Executions per step job. */
export const STEP_BATCH = 500;

/** One step job per STEP_BATCH executions that share a step and a due time. */
export function stepJobs(
  base: { workflow_id: string; step_order: number; due_at: number; attempt?: number },
  executionIds: string[],
): WorkflowStepJob[] {
  const jobs: WorkflowStepJob[] = [];
  for (let i = 0; i < executionIds.length; i += STEP_BATCH) {
    jobs.push({
      type: "workflow-step",
      id: crypto.randomUUID(),
      ...base,
      attempt: base.attempt ?? 0,
      execution_ids: executionIds.slice(i, i + STEP_BATCH),
    });
  }
  return jobs;
}

/** Jobs per KV commit: a step job of 500 ids is ≈20 KiB, and a commit carries at most 800 KiB. */
const JOBS_PER_COMMIT = 10;

/**
 * Enqueues jobs, each with the delay until it is due. Not through the shared group commit: a step
 * job is large (its execution ids), and these commits are few (one per page of a fan-out).
 */
export async function enqueueJobs(deps: Deps, jobs: (WorkflowStepJob | WorkflowFanoutJob)[]): Promise<void> {
  const now = deps.now();
  for (let i = 0; i < jobs.length; i += JOBS_PER_COMMIT) {
    const op = deps.kv.atomic();
    for (const job of jobs.slice(i, i + JOBS_PER_COMMIT)) {
      const delay = job.type === "workflow-step" ? queueDelay(job.due_at, now) : 0;
      op.enqueue(job, { delay, backoffSchedule: JOB_BACKOFF_MS });
    }
    const res = await op.commit();
    if (!res.ok) throw new Error("Cannot enqueue workflow jobs");
  }
}

/** Enqueues a stored start again until it is due (a schedule past the queue's 30-day delay). */
export async function enqueueStored(deps: Deps, job: WorkflowStartStoredJob): Promise<void> {
  await deps.kv.enqueue(job, storedJobOptions(job, deps.now()));
}

/** The step jobs of groups of executions (each group shares a workflow, a step and a due time). */
export function groupJobs(groups: { workflow_id: string; step_order: number; due: number; ids: string[] }[]) {
  return groups.flatMap((g) =>
    stepJobs({ workflow_id: g.workflow_id, step_order: g.step_order, due_at: g.due }, g.ids)
  );
}

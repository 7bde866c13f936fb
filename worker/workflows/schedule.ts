import { queueDelay } from "../../shared/sending/jobs.ts";
import type { Deps } from "../../shared/deps.ts";
import { enqueueStoredStart, type WorkflowStartStoredJob } from "../../shared/workflows/jobs.ts";
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

/**
 * Enqueues jobs, each with the delay until it is due. They share the queue's group commit (a step
 * job is large, its execution ids, and the KV adapter weighs it by size).
 */
export async function enqueueJobs(deps: Deps, jobs: (WorkflowStepJob | WorkflowFanoutJob)[]): Promise<void> {
  const now = deps.now();
  await Promise.all(jobs.map((job) => {
    const delayMs = job.type === "workflow-step" ? queueDelay(job.due_at, now) : 0;
    return deps.queue.enqueue(job, { delayMs });
  }));
}

/** Enqueues a stored start again until it is due (a schedule past the queue's 30-day delay). */
export async function enqueueStored(deps: Deps, job: WorkflowStartStoredJob): Promise<void> {
  await enqueueStoredStart(deps.queue, job, deps.now());
}

/** The step jobs of groups of executions (each group shares a workflow, a step and a due time). */
export function groupJobs(groups: { workflow_id: string; step_order: number; due: number; ids: string[] }[]) {
  return groups.flatMap((g) =>
    stepJobs({ workflow_id: g.workflow_id, step_order: g.step_order, due_at: g.due }, g.ids)
  );
}

import { TtlCache } from "../../shared/ttl_cache.ts";
import { workflowChanges } from "../../shared/changes.ts";
import { type Workflow, workflowById, workflowsForEvent } from "../../shared/workflows/definitions.ts";
import type { WorkerContext } from "../context.ts";
import { loadRuns } from "./queries.ts";
import type { RunContext } from "./variables.ts";

interface Caches {
  workflows: TtlCache<Workflow | undefined>;
  events: TtlCache<Workflow[]>;
  /** Runs by trigger and workflow: a run never changes once written, so entries live until evicted. */
  runs: Map<string, RunContext>;
}

/** Runs kept per worker (the oldest go first). */
const MAX_RUNS = 20_000;

const caches = new WeakMap<WorkerContext, Caches>();

/** A workflow changed through another process's API is seen by the worker within this time. */
const WORKFLOW_TTL_MS = 2_000;

function of(w: WorkerContext): Caches {
  let c = caches.get(w);
  if (!c) {
    // A change this process made to workflows empties the first two at once (workflowChanges).
    c = {
      workflows: new TtlCache<Workflow | undefined>(WORKFLOW_TTL_MS, { max: 1_000, forgetOn: workflowChanges }),
      events: new TtlCache<Workflow[]>(WORKFLOW_TTL_MS, { max: 1_000, forgetOn: workflowChanges }),
      runs: new Map(),
    };
    caches.set(w, c);
  }
  return c;
}

/** A workflow with its steps (each step job needs it), read at most every two seconds per worker. */
export function cachedWorkflow(w: WorkerContext, id: string): Promise<Workflow | undefined> {
  return of(w).workflows.get(id, w.deps.now(), () => workflowById(w.deps.sql, id));
}

/** The team's active workflows listening to an event, read at most every two seconds per worker. */
export function cachedEventWorkflows(w: WorkerContext, teamId: string, name: string): Promise<Workflow[]> {
  return of(w).events.get(`${teamId}\0${name}`, w.deps.now(), () => workflowsForEvent(w.deps.sql, teamId, name));
}

/** The contexts of a workflow's starts, by trigger id (the ones not cached read in one query). */
export async function cachedRuns(
  w: WorkerContext,
  workflowId: string,
  triggerIds: string[],
): Promise<Map<string, RunContext>> {
  const cache = of(w).runs;
  const key = (t: string) => `${t}\0${workflowId}`;
  const out = new Map<string, RunContext>();
  const missing: string[] = [];
  for (const t of new Set(triggerIds)) {
    const hit = cache.get(key(t));
    if (hit) out.set(t, hit);
    else missing.push(t);
  }
  if (missing.length === 0) return out;
  for (const run of await loadRuns(w.deps.sql, workflowId, missing)) {
    out.set(run.trigger_id, run);
    cache.set(key(run.trigger_id), run);
  }
  for (const k of cache.keys()) {
    if (cache.size <= MAX_RUNS) break;
    cache.delete(k);
  }
  return out;
}

import type { Db } from "../../shared/db.ts";
import { Batcher } from "../../shared/batcher.ts";
import { log } from "../../shared/log.ts";
import { completeTriggers } from "../../shared/workflows/complete.ts";
import type { Workflow } from "../../shared/workflows/definitions.ts";
import type { WorkflowStartsJob, WorkflowStartStoredJob } from "../../shared/workflows/jobs.ts";
import { type WorkflowStart, WorkflowStartSchema } from "../../shared/workflows/start.ts";
import type { WorkerContext } from "../context.ts";
import { nextPageIds } from "../recipients.ts";
import { audienceFilter, matchingContacts } from "./audience.ts";
import { cachedEventWorkflows, cachedRuns, cachedWorkflow } from "./cache.ts";
import { recordTriggers } from "./complete.ts";
import type { WorkflowFanoutJob } from "./jobs.ts";
import {
  claimCooldowns,
  insertExecutions,
  insertRuns,
  markFanoutDone,
  type NewExecution,
  waitingExecutions,
} from "./queries.ts";
import { enqueueJobs, enqueueStored, groupJobs } from "./schedule.ts";
import { nextStep, type RunContext, stepDelayMs } from "./variables.ts";

/** Pages of contacts one fan-out job turns into executions before handing on to the next job. */
const PAGES_PER_JOB = 4;

/** Starts handled in one batch at most (the starts of several queue jobs running at once). */
const STARTS_PER_BATCH = 1_000;

const batchers = new WeakMap<WorkerContext, Batcher<WorkflowStart[]>>();

/**
 * The `workflow-starts` job: starts accepted together. Jobs running at once are started in one
 * batch (see Batcher), so that a stream of small jobs costs a few statements per batch, not per job.
 */
export async function handleWorkflowStarts(w: WorkerContext, job: WorkflowStartsJob): Promise<void> {
  let batcher = batchers.get(w);
  if (!batcher) {
    batcher = new Batcher((lists) => startAll(w, lists.flat()), { maxWeight: STARTS_PER_BATCH });
    batchers.set(w, batcher);
  }
  await batcher.add(job.starts, job.starts.length);
}

/** The `workflow-start-stored` job: a start recorded in Postgres (scheduled, or large), now due. */
export async function handleWorkflowStartStored(w: WorkerContext, job: WorkflowStartStoredJob): Promise<void> {
  const { deps } = w;
  if (job.due_at > deps.now()) {
    await enqueueStored(deps, { ...job, id: crypto.randomUUID() });
    return;
  }
  const [row]: [{ spec: unknown }?] = await deps.sql`
    select spec from triggers where id = ${job.trigger_id} and flow_type = 'workflow'`;
  const parsed = WorkflowStartSchema.safeParse(row?.spec);
  if (!parsed.success) {
    log("warn", "workflow-start-stored: no such start", { trigger_id: job.trigger_id });
    return;
  }
  await startAll(w, [parsed.data], { stored: true });
}

function runOf(start: WorkflowStart, workflowId: string): RunContext {
  return {
    trigger_id: start.trigger_id,
    workflow_id: workflowId,
    team_id: start.team_id,
    source: start.source,
    sandbox: start.sandbox,
    variables: start.variables,
    channel_variables: start.channel_variables,
    steps_override: start.steps_override,
    event: start.event ?? null,
    metadata: start.metadata,
  };
}

/** The active workflows a start runs: the one an API start names, or those listening to the event. */
async function workflowsOf(w: WorkerContext, start: WorkflowStart): Promise<Workflow[]> {
  if (start.source === "event") return await cachedEventWorkflows(w, start.team_id, start.event!.name);
  const workflow = await cachedWorkflow(w, start.workflow_id!);
  return workflow && workflow.team_id === start.team_id && workflow.is_active ? [workflow] : [];
}

/**
 * Starts a batch of starts with a few statements for the lot: records their triggers, finds their
 * workflows and (for events) their contacts, records the runs, makes the executions of the
 * contacts that pass each workflow's conditions, enqueues their first steps (one job per batch of
 * executions sharing a step and due time), starts the fan-outs of tag and all starts, and completes
 * the triggers that reached no one, with the reason (the trigger's `note`).
 */
async function startAll(w: WorkerContext, starts: WorkflowStart[], options: { stored?: boolean } = {}) {
  const { deps } = w;
  const planned = await Promise.all(starts.map(async (start) => ({ start, workflows: await workflowsOf(w, start) })));
  await recordTriggers(
    w,
    planned.map(({ start, workflows }) => ({
      start,
      channels: [...new Set(workflows.flatMap((wf) => wf.steps.map((s) => s.channel_type)))],
    })),
    options,
  );
  const contacts = await startContacts(deps.sql, starts);
  const runs: (RunContext & { fanout_done: boolean })[] = [];
  const fanouts: WorkflowFanoutJob[] = [];
  const candidates: { run: RunContext; workflow: Workflow; contact_id: string; id: string }[] = [];
  const notes = new Notes();
  for (const { start, workflows } of planned) {
    const recipient = start.recipient;
    if (workflows.length === 0) {
      notes.add(
        start.trigger_id,
        start.source === "event"
          ? `No active workflow listens to the event '${start.event!.name}'`
          : "The workflow was deactivated or deleted before the start ran",
      );
    }
    const fanout = start.source === "api" && recipient !== undefined && recipient.type !== "contact";
    for (const workflow of workflows) {
      const run = runOf(start, workflow.id);
      runs.push({ ...run, fanout_done: !fanout });
      if (fanout) {
        fanouts.push({
          type: "workflow-fanout",
          id: crypto.randomUUID(),
          trigger_id: start.trigger_id,
          workflow_id: workflow.id,
          tags: recipient.type === "tag" ? recipient.tags : [],
          after: null,
        });
        continue;
      }
      const contactId = contacts.get(start.trigger_id);
      if (!contactId) {
        notes.add(
          start.trigger_id,
          start.source === "event"
            ? "No contact matches the event's user_info (contact_external_id or email)"
            : "The contact was deleted before the start ran",
        );
        continue;
      }
      candidates.push({ run, workflow, contact_id: contactId, id: start.execution_id ?? crypto.randomUUID() });
    }
  }
  await insertRuns(deps.sql, runs);
  const busy = await createFor(w, candidates, { notes });
  await enqueueJobs(deps, fanouts);
  for (const f of fanouts) busy.add(f.trigger_id);
  // The others reached no one (or ran no step): complete them now.
  const idle = starts.map((s) => s.trigger_id).filter((id) => !busy.has(id));
  await completeTriggers(w.deps, idle, notes.joined(idle));
}

/** Notes of a start's own contact and of a fan-out alike. */
const SEGMENT_GONE = "The workflow's segment no longer exists";
const NO_ACTIVE_STEP = "The workflow has no active step";

/** Why each start's workflows passed its contact by (a start may run several workflows). */
class Notes {
  readonly #reasons = new Map<string, Set<string>>();

  add(triggerId: string, reason: string): void {
    this.#reasons.set(triggerId, (this.#reasons.get(triggerId) ?? new Set()).add(reason));
  }

  /** The reasons of each of `triggerIds` that has some, joined. */
  joined(triggerIds: string[]): Map<string, string> {
    return new Map(
      triggerIds.flatMap((id) => this.#reasons.has(id) ? [[id, [...this.#reasons.get(id)!].join("; ")]] : []),
    );
  }
}

/** The contact of each contact start and event (events: by contact_external_id, else by email). */
async function startContacts(db: Db, starts: WorkflowStart[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const byTeam = new Map<string, WorkflowStart[]>();
  const named: { triggerId: string; contactId: string }[] = [];
  for (const s of starts) {
    if (s.recipient?.type === "contact") named.push({ triggerId: s.trigger_id, contactId: s.recipient.contact_id });
    else if (s.source === "event") byTeam.set(s.team_id, [...byTeam.get(s.team_id) ?? [], s]);
  }
  if (named.length > 0) {
    // A scheduled start's contact may have been deleted since it was accepted: it starts nothing
    // (its execution would break the contact's foreign key on every try, leaving the trigger open).
    const ids = named.map((n) => n.contactId);
    const existing = new Set(
      (await db<{ id: string }[]>`select id from contacts where id = any(${ids}::uuid[])`).map((r) => r.id),
    );
    for (const n of named) if (existing.has(n.contactId)) out.set(n.triggerId, n.contactId);
  }
  for (const [teamId, events] of byTeam) {
    const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
    const externalIds = events.flatMap((e) => text(e.event!.user_info.contact_external_id) ?? []);
    const emails = events.flatMap((e) => text(e.event!.user_info.email)?.toLowerCase() ?? []);
    const byExternal = new Map<string, string>();
    const byEmail = new Map<string, string>();
    if (externalIds.length > 0) {
      for (
        const r of await db<{ id: string; external_id: string }[]>`
        select id, external_id from contacts where team_id = ${teamId} and external_id = any(${externalIds}::text[])`
      ) {
        byExternal.set(r.external_id, r.id);
      }
    }
    if (emails.length > 0) {
      for (
        const r of await db<{ id: string; email: string }[]>`
        select id, lower(email) as email from contacts where team_id = ${teamId} and lower(email) = any(${emails}::text[])`
      ) {
        byEmail.set(r.email, r.id);
      }
    }
    for (const e of events) {
      const info = e.event!.user_info;
      const id = byExternal.get(text(info.contact_external_id) ?? "") ??
        byEmail.get(text(info.email)?.toLowerCase() ?? "");
      if (id) out.set(e.trigger_id, id);
    }
  }
  return out;
}

/**
 * Makes the executions of candidates (a contact for a start of a workflow) that pass the
 * workflow's tag and segment conditions (unless `prefiltered`: a fan-out page is) and are out of
 * its cooldown (the cooldown claims and the executions share one transaction), and enqueues their
 * first steps. Executions an earlier delivery of the job made, still waiting for their first step,
 * get it enqueued again. Answers the triggers that have executions waiting for a step.
 */
async function createFor(
  w: WorkerContext,
  candidates: { run: RunContext; workflow: Workflow; contact_id: string; id: string }[],
  options: { prefiltered?: boolean; notes?: Notes } = {},
): Promise<Set<string>> {
  const busy = new Set<string>();
  if (candidates.length === 0) return busy;
  const { deps } = w;
  const now = deps.now();
  const byWorkflow = new Map<string, typeof candidates>();
  for (const c of candidates) byWorkflow.set(c.workflow.id, [...byWorkflow.get(c.workflow.id) ?? [], c]);
  const passing: typeof candidates = [];
  for (const group of byWorkflow.values()) {
    const { conditions, team_id } = group[0].workflow;
    if (options.prefiltered || (!conditions.tags?.length && conditions.segment_id === undefined)) {
      passing.push(...group);
      continue;
    }
    const filter = await audienceFilter(deps.sql, team_id, conditions);
    const ok = new Set(filter ? await matchingContacts(deps.sql, team_id, filter, group.map((c) => c.contact_id)) : []);
    for (const c of group) {
      if (ok.has(c.contact_id)) passing.push(c);
      else {
        options.notes?.add(
          c.run.trigger_id,
          filter ? "The contact does not meet the workflow's conditions" : SEGMENT_GONE,
        );
      }
    }
  }
  const executions = passing.map((c): NewExecution => {
    const first = nextStep(c.run, c.workflow.steps, 0);
    return {
      id: c.id,
      team_id: c.run.team_id,
      workflow_id: c.workflow.id,
      trigger_id: c.run.trigger_id,
      contact_id: c.contact_id,
      source: c.run.source,
      first: first && { step_order: first.step_order, due: now + stepDelayMs(c.run, first) },
    };
  });
  const created = await deps.sql.begin(async (tx) => {
    const allowed = await outOfCooldown(tx, executions, byWorkflow, now);
    for (const e of executions) {
      if (!allowed.has(e)) options.notes?.add(e.trigger_id, "The contact is within the workflow's cooldown");
    }
    return await insertExecutions(tx, executions.filter((e) => allowed.has(e)), now);
  });
  const groups = new Map<string, { workflow_id: string; step_order: number; due: number; ids: string[] }>();
  for (const e of executions) {
    if (created.has(e.id) && !e.first) options.notes?.add(e.trigger_id, NO_ACTIVE_STEP);
    if (!created.has(e.id) || !e.first) continue;
    busy.add(e.trigger_id);
    const key = `${e.workflow_id}\0${e.first.step_order}\0${e.first.due}`;
    const group = groups.get(key) ?? { workflow_id: e.workflow_id, ...e.first, ids: [] };
    group.ids.push(e.id);
    groups.set(key, group);
  }
  await enqueueJobs(deps, groupJobs([...groups.values()]));
  const existing = executions.filter((e) => !created.has(e.id));
  if (existing.length > 0) {
    // Made by an earlier delivery of this job: any still waiting for their first step keep the trigger busy.
    const waiting = await waitingExecutions(deps.sql, existing);
    await enqueueJobs(deps, groupJobs(waiting));
    if (waiting.length > 0) { for (const e of existing) busy.add(e.trigger_id); }
  }
  return busy;
}

/**
 * The executions whose contact is out of its workflow's cooldown, claiming it: of several starts
 * of one contact in the batch, the first only.
 */
async function outOfCooldown(
  tx: Db,
  executions: NewExecution[],
  byWorkflow: Map<string, { workflow: Workflow }[]>,
  now: number,
): Promise<Set<NewExecution>> {
  const allowed = new Set<NewExecution>();
  const grouped = new Map<string, NewExecution[]>();
  for (const e of executions) grouped.set(e.workflow_id, [...grouped.get(e.workflow_id) ?? [], e]);
  for (const [workflowId, list] of grouped) {
    const minutes = byWorkflow.get(workflowId)![0].workflow.conditions.cooldown_minutes ?? 0;
    if (minutes <= 0) {
      for (const e of list) allowed.add(e);
      continue;
    }
    const firsts = new Map<string, NewExecution>();
    for (const e of list) if (!firsts.has(e.contact_id)) firsts.set(e.contact_id, e);
    const free = await claimCooldowns(tx, workflowId, [...firsts.keys()], minutes, now);
    for (const [contactId, e] of firsts) if (free.has(contactId)) allowed.add(e);
  }
  return allowed;
}

/**
 * The `workflow-fanout` job: pages the contacts of a tag or all start (with the workflow's
 * conditions) into executions, PAGES_PER_JOB pages at a time, then hands on to the next job.
 * Redelivered, it makes no execution twice.
 */
export async function handleWorkflowFanout(w: WorkerContext, job: WorkflowFanoutJob): Promise<void> {
  const { deps } = w;
  const workflow = await cachedWorkflow(w, job.workflow_id);
  const run = workflow && (await cachedRuns(w, job.workflow_id, [job.trigger_id])).get(job.trigger_id);
  if (!workflow || !run) return;
  const filter = await audienceFilter(deps.sql, run.team_id, workflow.conditions, job.tags);
  let after = job.after;
  let done = !filter;
  for (let page = 0; filter && page < PAGES_PER_JOB && !done; page++) {
    const ids = await nextPageIds(deps.sql, run.team_id, filter, after, w.pageSize);
    if (ids.length > 0) {
      const candidates = ids.map((id) => ({ run, workflow, contact_id: id, id: crypto.randomUUID() }));
      await createFor(w, candidates, { prefiltered: true });
      after = ids[ids.length - 1];
    }
    done = ids.length < w.pageSize;
  }
  if (!done) {
    await enqueueJobs(deps, [{ ...job, id: crypto.randomUUID(), after }]);
    return;
  }
  await markFanoutDone(deps.sql, job.trigger_id, job.workflow_id);
  // `after` is set once a page has found a contact (in this job or an earlier one of the chain).
  const note = fanoutNote({
    workflow,
    run,
    tags: job.tags,
    segmentFound: filter !== undefined,
    matched: after !== null,
  });
  await completeTriggers(w.deps, [job.trigger_id], new Map([[job.trigger_id, note]]));
}

/**
 * Why a tag or all start would reach no one (kept only when it did): its contacts, found a page
 * at a time, are not at hand at the end, so the reason is read from what the fan-out saw.
 */
function fanoutNote(
  f: { workflow: Workflow; run: RunContext; tags: string[]; segmentFound: boolean; matched: boolean },
): string {
  if (!f.segmentFound) return SEGMENT_GONE;
  const { conditions } = f.workflow;
  const conditioned = (conditions.tags?.length ?? 0) > 0 || conditions.segment_id !== undefined;
  if (!f.matched) {
    if (f.tags.length > 0) {
      return `No contact has every tag of the start${conditioned ? " and meets the workflow's conditions" : ""}`;
    }
    return conditioned ? "No contact meets the workflow's conditions" : "The team has no contacts";
  }
  if (!nextStep(f.run, f.workflow.steps, 0)) return NO_ACTIVE_STEP;
  return "Every contact it found is within the workflow's cooldown";
}

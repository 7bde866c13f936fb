import type { Context } from "hono";
import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { saveNewWorkflow, saveWorkflowChanges } from "../workflows/edits.ts";
import { executionsAfter } from "../workflows/executions.ts";
import { findWorkflow, listWorkflows, type Workflow } from "../workflows/queries.ts";
import type { UpdateWorkflowData } from "../workflows/schemas.ts";
import { workflowStatistics } from "../workflows/statistics.ts";
import { auditChange } from "./audit.ts";
import type { DashboardEnv } from "./env.ts";
import { field } from "./form.ts";
import { MessagePage } from "./layout.tsx";
import { parseTriggerCursor } from "./trigger_list.ts";
import {
  type Checked,
  checkNewWorkflow,
  emptyStepDraft,
  refusalOf,
  stepDraftFromForm,
  stepDraftOf,
  stepsWith,
  stepsWithout,
  type WorkflowDraft,
  workflowDraftFromForm,
} from "./workflow_form.ts";
import { WorkflowListPage, workflowPath } from "./workflow_list.tsx";
import { type Notice, NOTICES, type Refused, WorkflowPage } from "./workflow_page.tsx";
import { contactEmails, lastRuns, stepTemplates } from "./workflow_queries.ts";

/** Workflows on one page of the list. */
const LIST_SIZE = 50;
/** Executions on one page of a workflow's history. */
const HISTORY_SIZE = 25;

/**
 * The workflow pages: the team's workflows and a form for a new one; a workflow's statistics view,
 * its steps each editable (and added or removed), its activation, and its execution history in
 * keyset pages. Members may do all of it, as with templates. Every change goes through the API's
 * own checks and writes (schemas, checkTemplates, saveWorkflowChanges), so a workflow edited here is
 * the one the API would have saved.
 */
export function workflowsRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  function notFound(c: Context<DashboardEnv>, what = "workflow") {
    const message = `There is no such ${what} in your team's workflows: it may have been deleted.`;
    return c.html(<MessagePage title="Workflow not found" message={message} user={c.get("user")} />, 404);
  }

  /** The signed-in team's workflow the path names; undefined for another team's or an unknown one. */
  const workflowOf = (c: Context<DashboardEnv>) => findWorkflow(deps.sql, c.get("user").teamId, c.req.param("id")!);

  function audit(c: Context<DashboardEnv>, what: string, workflow: Workflow) {
    auditChange(c, `dashboard workflow ${what}`, { workflow_id: workflow.id });
  }

  async function listPage(c: Context<DashboardEnv>, draft: WorkflowDraft, errors?: string[]) {
    const user = c.get("user");
    const search = (c.req.query("q") ?? "").trim().slice(0, 200);
    const page = Math.min(1_000_000, Math.max(1, Number.parseInt(c.req.query("page") ?? "1", 10) || 1));
    const [{ workflows, total }, templates] = await Promise.all([
      listWorkflows(deps.sql, user.teamId, { search }, { page, limit: LIST_SIZE }),
      stepTemplates(deps.sql, user.teamId),
    ]);
    const runs = await lastRuns(deps.sql, workflows.map((w) => w.id));
    return c.html(
      <WorkflowListPage
        user={user}
        workflows={workflows}
        lastRuns={runs}
        page={page}
        totalPages={Math.ceil(total / LIST_SIZE)}
        search={search}
        templates={templates}
        draft={draft}
        errors={errors}
      />,
      errors ? 400 : 200,
    );
  }

  async function workflowPage(
    c: Context<DashboardEnv>,
    workflow: Workflow,
    extra: { notice?: Notice; refused?: Refused; stale?: boolean } = {},
    status: 200 | 400 | 409 = 200,
  ) {
    const user = c.get("user");
    const after = c.req.method === "GET" ? c.req.query("after") : undefined;
    const cursor = parseTriggerCursor(after);
    // The statistics go above the newest executions: the pages further into the history leave them out.
    const [stats, templates, history] = await Promise.all([
      cursor ? undefined : workflowStatistics(deps.sql, workflow, deps.now()),
      stepTemplates(deps.sql, user.teamId),
      executionsAfter(deps.sql, workflow.id, workflow.steps, { limit: HISTORY_SIZE, after: cursor }),
    ]);
    const contactIds = history.executions.flatMap((e) => (e.contact_id ? [e.contact_id] : []));
    const contacts = await contactEmails(deps.sql, user.teamId, contactIds);
    const last = history.executions.at(-1);
    const next = history.hasMore && last ? `${Date.parse(last.created_at)}_${last.id}` : null;
    return c.html(
      <WorkflowPage
        user={user}
        workflow={workflow}
        stats={stats}
        templates={templates}
        executions={history.executions}
        contacts={contacts}
        next={next}
        after={cursor ? after : undefined}
        {...extra}
      />,
      status,
    );
  }

  /**
   * Saves a change of a workflow made on its page, unless the page was of an older version (409:
   * the page comes back as the workflow now is), or the API's checks refuse it (400: the form comes
   * back as typed, with the reasons).
   */
  async function save(
    c: Context<DashboardEnv>,
    workflow: Workflow,
    change: { checked: Checked<UpdateWorkflowData>; refused: Omit<Refused, "errors">; done: Notice; anchor?: string },
  ) {
    const form = await c.req.parseBody();
    if (field(form, "version") !== String(workflow.updated_at.getTime())) {
      return await workflowPage(c, workflow, { stale: true }, 409);
    }
    const { checked } = change;
    let errors: string[];
    if (checked.ok) {
      try {
        const saved = await saveWorkflowChanges(deps.sql, workflow.team_id, workflow.id, checked.body);
        audit(c, change.done, saved);
        return c.redirect(`${workflowPath(workflow.id)}?done=${change.done}${change.anchor ?? ""}`, 303);
      } catch (err) {
        errors = refusalOf(err, checked.body.steps ?? []);
      }
    } else {
      errors = checked.errors;
    }
    return await workflowPage(c, workflow, { refused: { ...change.refused, errors } }, 400);
  }

  app.get("/workflows", (c) => listPage(c, { name: "", event_type: "", is_active: false, step: emptyStepDraft() }));

  app.post("/workflows", async (c) => {
    const draft = workflowDraftFromForm(await c.req.parseBody());
    const checked = checkNewWorkflow(draft);
    if (!checked.ok) return await listPage(c, draft, checked.errors);
    try {
      const workflow = await saveNewWorkflow(deps.sql, c.get("user").teamId, checked.body);
      audit(c, "created", workflow);
      return c.redirect(`${workflowPath(workflow.id)}?done=created`, 303);
    } catch (err) {
      return await listPage(c, draft, refusalOf(err, checked.body.steps));
    }
  });

  app.get("/workflows/:id", async (c) => {
    const workflow = await workflowOf(c);
    if (!workflow) return notFound(c);
    const done = c.req.query("done");
    return await workflowPage(c, workflow, { notice: done && done in NOTICES ? done as Notice : undefined });
  });

  for (const [action, active] of [["activate", true], ["deactivate", false]] as const) {
    app.post(`/workflows/:id/${action}`, async (c) => {
      const workflow = await workflowOf(c);
      if (!workflow) return notFound(c);
      const checked = { ok: true as const, body: { is_active: active } };
      return await save(c, workflow, {
        checked,
        refused: { form: "new", draft: emptyStepDraft() },
        done: active ? "activated" : "deactivated",
      });
    });
  }

  app.post("/workflows/:id/steps", async (c) => {
    const workflow = await workflowOf(c);
    if (!workflow) return notFound(c);
    const draft = stepDraftFromForm(await c.req.parseBody());
    const checked = stepsWith(workflow.steps, draft);
    return await save(c, workflow, { checked, refused: { form: "new", draft }, done: "added", anchor: "#steps" });
  });

  app.post("/workflows/:id/steps/:order", async (c) => {
    const workflow = await workflowOf(c);
    const order = Number(c.req.param("order"));
    if (!workflow || !workflow.steps.some((s) => s.step_order === order)) return notFound(c, "step");
    const draft = stepDraftFromForm(await c.req.parseBody());
    const checked = stepsWith(workflow.steps, draft, order);
    return await save(c, workflow, {
      checked,
      refused: { form: order, draft },
      done: "saved",
      anchor: `#step-${order}`,
    });
  });

  app.post("/workflows/:id/steps/:order/delete", async (c) => {
    const workflow = await workflowOf(c);
    const step = workflow?.steps.find((s) => s.step_order === Number(c.req.param("order")));
    if (!workflow || !step) return notFound(c, "step");
    return await save(c, workflow, {
      checked: stepsWithout(workflow.steps, step.step_order),
      refused: { form: step.step_order, draft: stepDraftOf(step) },
      done: "removed",
      anchor: "#steps",
    });
  });

  return app;
}

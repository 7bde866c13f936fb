import type { Workflow } from "../workflows/queries.ts";
import { BASE, CsrfField, Page, When } from "./layout.tsx";
import { Badge, queryOf } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";
import { Table } from "./table.tsx";
import { StepFields } from "./workflow_fields.tsx";
import type { WorkflowDraft } from "./workflow_form.ts";
import { type LastRun, STEP_CHANNELS, type StepTemplates } from "./workflow_queries.ts";

/** Where the workflow list is, and a workflow's page. */
export const WORKFLOWS = `${BASE}/workflows`;
export const workflowPath = (id: string) => `${WORKFLOWS}/${id}`;

/** A workflow's active state as a badge. */
export function ActiveBadge(props: { active: boolean }) {
  return props.active ? <Badge value="active">active</Badge> : <Badge value="inactive">inactive</Badge>;
}

function WorkflowTable(props: { workflows: Workflow[]; lastRuns: Map<string, LastRun> }) {
  return (
    <Table caption="Workflows" headings={["Name", "Event", "State", "Steps", "Last run"]}>
      {props.workflows.map((w) => {
        const last = props.lastRuns.get(w.id);
        const active = w.steps.filter((s) => s.is_active).length;
        return (
          <tr key={w.id} data-workflow={w.id}>
            <td data-label="Name">
              <a href={workflowPath(w.id)}>{w.name}</a>
            </td>
            <td data-label="Event">
              <code>{w.event_type}</code>
            </td>
            <td data-label="State">
              <ActiveBadge active={w.is_active} />
            </td>
            <td data-label="Steps" class="number">
              {w.steps.length}
              {active < w.steps.length && <span class="muted">{` (${active} active)`}</span>}
            </td>
            <td data-label="Last run">
              {last
                ? (
                  <a href={`${BASE}/sends/${last.trigger_id}`}>
                    <When at={last.created_at} />
                  </a>
                )
                : <When at={null} />}
            </td>
          </tr>
        );
      })}
    </Table>
  );
}

/** Page links of the list (the API's list is paged by number; a team has few workflows). */
function PageLinks(props: { page: number; totalPages: number; search: string }) {
  const { page, totalPages, search } = props;
  if (totalPages <= 1) return null;
  const link = (p: number) => `${WORKFLOWS}${queryOf({ q: search, page: p === 1 ? undefined : String(p) })}`;
  return (
    <nav class="pager" aria-label="Pages">
      {page > 1 && <a href={link(page - 1)} rel="prev">Previous page</a>}
      <span class="muted">Page {page} of {totalPages}</span>
      {page < totalPages && <a href={link(page + 1)} rel="next">Next page</a>}
    </nav>
  );
}

/** The form that makes a workflow: a name, the event it listens for and a first step. */
function NewWorkflowForm(props: { user: SessionUser; draft: WorkflowDraft; templates: StepTemplates }) {
  const { draft, templates } = props;
  const none = STEP_CHANNELS.every((c) => templates[c].length === 0);
  return (
    <section class="card" aria-labelledby="new-title" id="new-workflow">
      <h2 id="new-title">New workflow</h2>
      {none
        ? (
          <p class="empty">
            A workflow's steps send templates: first <a href={`${BASE}/templates/email`}>create a template</a>{" "}
            on email, SMS or WhatsApp, then come back here.
          </p>
        )
        : (
          <form method="post" action={WORKFLOWS}>
            <CsrfField user={props.user} />
            <div class="row">
              <div class="field">
                <label for="new-name">Name</label>
                <input id="new-name" name="name" value={draft.name} required maxlength={200} />
              </div>
              <div class="field">
                <label for="new-event">Event it listens for</label>
                <p class="hint" id="new-event-hint">
                  <code>POST /api/v1/events/send</code> with this <code>event_name</code> starts it.
                </p>
                <input
                  id="new-event"
                  name="event_type"
                  value={draft.event_type}
                  required
                  maxlength={200}
                  placeholder="user_signup"
                  aria-describedby="new-event-hint"
                />
              </div>
            </div>
            <fieldset>
              <legend>First step</legend>
              <StepFields prefix="new-step" draft={draft.step} templates={templates} />
            </fieldset>
            <div class="field check">
              <input id="new-active" name="workflow_active" type="checkbox" value="on" checked={draft.is_active} />
              <label for="new-active">Active at once (else activate it on its page when its steps are right)</label>
            </div>
            <button type="submit">Create the workflow</button>
          </form>
        )}
    </section>
  );
}

/** The team's workflows, a search, and the form for a new one. */
export function WorkflowListPage(
  props: {
    user: SessionUser;
    workflows: Workflow[];
    lastRuns: Map<string, LastRun>;
    page: number;
    totalPages: number;
    search: string;
    templates: StepTemplates;
    draft: WorkflowDraft;
    errors?: string[];
  },
) {
  const { workflows, search } = props;
  return (
    <Page title="Workflows" user={props.user} active="workflows">
      <h1>Workflows</h1>
      {props.errors && (
        <div class="card alert" role="alert" id="form-errors">
          <p>
            <strong>The workflow was not created:</strong>
          </p>
          <ul>
            {props.errors.map((e) => <li key={e}>{e}</li>)}
          </ul>
        </div>
      )}
      <section class="card" aria-labelledby="list-title">
        <h2 id="list-title">Workflows, newest first</h2>
        <form role="search" method="get" action={WORKFLOWS}>
          <div class="row">
            <div class="field grow">
              <label for="search">Name or description contains</label>
              <input id="search" name="q" type="search" value={search} maxlength={200} />
            </div>
            <button type="submit">Search</button>
          </div>
        </form>
        {workflows.length > 0
          ? (
            <>
              <WorkflowTable workflows={workflows} lastRuns={props.lastRuns} />
              <PageLinks page={props.page} totalPages={props.totalPages} search={search} />
            </>
          )
          : search
          ? <p class="empty">No workflow's name or description contains “{search}”.</p>
          : (
            <div class="empty">
              <p>
                <strong>No workflows yet.</strong>
              </p>
              <p>
                Create the first one with the form below (or{" "}
                <code>POST /api/v1/workflows</code>): a name, the event it listens for and a first step. Then start it
                with <code>POST /api/v1/events/send</code> or{" "}
                <code>POST /api/v1/workflows/trigger</code>, and follow its runs on its page.
              </p>
            </div>
          )}
      </section>
      <NewWorkflowForm user={props.user} draft={props.draft} templates={props.templates} />
    </Page>
  );
}

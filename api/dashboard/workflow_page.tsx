import type { ExecutionView } from "../workflows/executions.ts";
import type { Workflow } from "../workflows/queries.ts";
import type { workflowStatistics } from "../workflows/statistics.ts";
import { Fact, Facts } from "./facts.tsx";
import { BASE, CsrfField, Page, When } from "./layout.tsx";
import { Badge, Pager } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";
import { Table } from "./table.tsx";
import { channelName, StepFields } from "./workflow_fields.tsx";
import { emptyStepDraft, type StepDraft, stepDraftOf } from "./workflow_form.ts";
import { ActiveBadge, workflowPath, WORKFLOWS } from "./workflow_list.tsx";
import type { StepTemplates } from "./workflow_queries.ts";

/** The statistics view, as the API's GET /workflows/{id} computes it. */
export type Statistics = Awaited<ReturnType<typeof workflowStatistics>>;

/** What the page says at the top after an action that went through. */
export const NOTICES = {
  created: "The workflow is created.",
  saved: "The step is saved: starts from now on use it.",
  added: "The step is added at the end.",
  removed: "The step is removed.",
  activated: "The workflow is active: its event and API starts run it.",
  deactivated:
    "The workflow is inactive: its event and API starts no longer run it; executions under way finish their steps.",
} as const;

/** A notice's name. */
export type Notice = keyof typeof NOTICES;

/** A form that was refused: which one (a step's order, `new` for the add form) and what it held. */
export interface Refused {
  form: number | "new";
  draft: StepDraft;
  errors: string[];
}

/** A status word as a badge (the statuses are upper case; the badge's class is not). */
function StatusBadge(props: { status: string }) {
  return <Badge value={props.status.toLowerCase()}>{props.status}</Badge>;
}

/** Dollars as the API answers them: below a dollar to the hundredth of a cent (an SMS costs fractions of one). */
const usd = (n: number) => `$${n.toFixed(n > 0 && n < 1 ? 4 : 2)}`;

function ChannelRows(props: { stats: Statistics }) {
  const channels = Object.entries(props.stats.channels);
  if (channels.length === 0) return null;
  return (
    <Table
      caption="Per channel"
      headings={["Channel", "Executions", "Contacts", "Sent", "Failed", "Rates", "Estimated cost"]}
    >
      {channels.map(([channel, s]) => (
        <tr key={channel} data-channel={channel}>
          <td data-label="Channel">{channelName(channel)}</td>
          <td data-label="Executions" class="number">{s.execution_count}</td>
          <td data-label="Contacts" class="number">{s.total_contacts}</td>
          <td data-label="Sent" class="number" data-count="sent">{s.sent}</td>
          <td data-label="Failed" class="number" data-count="failed">{s.failed}</td>
          <td data-label="Rates">
            {"success_rate" in s && `${s.success_rate}% succeeded`}
            {"delivery_rate" in s && `${s.delivered} delivered (${s.delivery_rate}%), ${s.read} read (${s.read_rate}%)`}
          </td>
          <td data-label="Estimated cost" class="number">
            {"estimated_cost" in s && s.estimated_cost !== undefined
              ? usd(s.estimated_cost)
              : <span class="muted">—</span>}
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** The statistics view: status, progress, totals and per channel. */
function StatisticsCard(props: { stats: Statistics }) {
  const { stats: s } = props;
  const at = (iso: string | null) => (iso ? new Date(iso) : null);
  return (
    <section class="card" aria-labelledby="stats-title" id="statistics">
      <h2 id="stats-title">Statistics</h2>
      <p>
        Status: <StatusBadge status={s.status} /> · {s.workflow_executions_count}{" "}
        execution{s.workflow_executions_count === 1 ? "" : "s"}
        {s.workflow_executions_count > 0 && (
          <>
            {" "}· last started by {s.trigger_type === "api" ? "the API" : (
              <>
                the event <code>{s.trigger_source}</code>
              </>
            )}
          </>
        )}
      </p>
      <label for="workflow-progress">
        Executions finished: {s.progress.processed} of {s.progress.total} ({s.progress.percentage}%)
      </label>
      <progress id="workflow-progress" max={Math.max(1, s.progress.total)} value={s.progress.processed} />
      <Facts>
        <Fact term="Contacts">{s.totals.total_contacts}</Fact>
        <Fact term="Sent">
          <span data-total="sent">{s.totals.total_sent}</span>
        </Fact>
        <Fact term="Failed">
          <span data-total="failed">{s.totals.total_failed}</span>
        </Fact>
        <Fact term="Success rate">{s.totals.overall_success_rate}%</Fact>
        <Fact term="Cost">{usd(s.totals.total_cost)}</Fact>
        <Fact term="First started">
          <When at={at(s.started_at)} never="Not yet" />
        </Fact>
        <Fact term="Completed">
          <When at={at(s.completed_at)} never="Not yet" />
        </Fact>
        <Fact term="Next step due">{s.scheduled_at && <When at={at(s.scheduled_at)} />}</Fact>
        <Fact term="Duration">{s.duration_seconds > 0 && `${Math.round(s.duration_seconds)} s`}</Fact>
      </Facts>
      <ChannelRows stats={s} />
      <p class="muted">
        The API answers the same at <code>GET /api/v1/workflows/{"{id}"}</code>.
      </p>
    </section>
  );
}

/** Errors of a refused form, above it. */
function Errors(props: { errors: string[]; id: string }) {
  return (
    <div class="alert" role="alert" id={props.id}>
      <p>
        <strong>Not saved:</strong>
      </p>
      <ul>
        {props.errors.map((e) => <li key={e}>{e}</li>)}
      </ul>
    </div>
  );
}

function StepsCard(
  props: { user: SessionUser; workflow: Workflow; templates: StepTemplates; refused?: Refused },
) {
  const { user, workflow: w, templates, refused } = props;
  const version = String(w.updated_at.getTime());
  return (
    <section class="card" aria-labelledby="steps-title" id="steps">
      <h2 id="steps-title">Steps, in order</h2>
      <p class="muted">
        Each step sends its template on its channel, its delay after the step before. A change applies to the steps runs
        reach from now on.
      </p>
      {w.steps.map((step) => {
        const mine = refused?.form === step.step_order ? refused : undefined;
        const path = `${workflowPath(w.id)}/steps/${step.step_order}`;
        return (
          <article
            key={step.id}
            class="step"
            id={`step-${step.step_order}`}
            aria-labelledby={`step-${step.step_order}-title`}
          >
            <h3 id={`step-${step.step_order}-title`}>
              Step {step.step_order}: {step.step_name}
              {!step.is_active && <span class="tag">skipped</span>}
            </h3>
            {mine && <Errors errors={mine.errors} id={`step-${step.step_order}-errors`} />}
            <form method="post" action={path}>
              <CsrfField user={user} />
              <input type="hidden" name="version" value={version} />
              <StepFields
                prefix={`step-${step.step_order}`}
                draft={mine?.draft ?? stepDraftOf(step)}
                templates={templates}
              />
              <div class="actions">
                <button type="submit">Save step {step.step_order}</button>
              </div>
            </form>
            {w.steps.length > 1 && (
              <form method="post" action={`${path}/delete`}>
                <CsrfField user={user} />
                <input type="hidden" name="version" value={version} />
                <button type="submit" class="danger quiet">Remove step {step.step_order}</button>
              </form>
            )}
          </article>
        );
      })}
      <article class="step" id="add-step" aria-labelledby="add-step-title">
        <h3 id="add-step-title">Add a step at the end</h3>
        {refused?.form === "new" && <Errors errors={refused.errors} id="add-step-errors" />}
        <form method="post" action={`${workflowPath(w.id)}/steps`}>
          <CsrfField user={user} />
          <input type="hidden" name="version" value={version} />
          <StepFields
            prefix="add-step"
            draft={refused?.form === "new" ? refused.draft : emptyStepDraft()}
            templates={templates}
          />
          <button type="submit">Add the step</button>
        </form>
      </article>
    </section>
  );
}

/** How far an execution got: its steps' outcomes counted. */
function stepCounts(e: ExecutionView) {
  const count = (status: string) => e.steps.filter((s) => s.status === status).length;
  return { sent: count("SENT"), failed: count("FAILED"), filtered: count("FILTERED") };
}

function ExecutionsCard(
  props: {
    workflow: Workflow;
    executions: ExecutionView[];
    contacts: Map<string, string>;
    next: string | null;
    after?: string;
  },
) {
  const { executions } = props;
  return (
    <section class="card" aria-labelledby="executions-title" id="executions">
      <h2 id="executions-title">Execution history, newest first</h2>
      {executions.length > 0
        ? (
          <>
            <Table
              caption="Executions"
              headings={["Created", "Contact", "Status", "Step", "Sent", "Failed", "Filtered", "Started", "Completed"]}
            >
              {executions.map((e) => {
                const counts = stepCounts(e);
                return (
                  <tr key={e.id} data-execution={e.id}>
                    <td data-label="Created">
                      <a href={`${BASE}/sends/${e.trigger_id}`} title="The start that made it">
                        <When at={new Date(e.created_at)} />
                      </a>
                    </td>
                    <td data-label="Contact">
                      {e.contact_id && props.contacts.has(e.contact_id)
                        ? <a href={`${BASE}/contacts/${e.contact_id}`}>{props.contacts.get(e.contact_id)}</a>
                        : <span class="muted">deleted</span>}
                    </td>
                    <td data-label="Status" data-field="status">
                      <StatusBadge status={e.status} />
                    </td>
                    <td data-label="Step" class="number">{e.current_step ?? "—"}</td>
                    <td data-label="Sent" class="number" data-count="sent">{counts.sent}</td>
                    <td data-label="Failed" class="number" data-count="failed">{counts.failed}</td>
                    <td data-label="Filtered" class="number" data-count="filtered">{counts.filtered}</td>
                    <td data-label="Started">
                      <When at={e.started_at ? new Date(e.started_at) : null} never="Not yet" />
                    </td>
                    <td data-label="Completed">
                      <When at={e.completed_at ? new Date(e.completed_at) : null} never="Not yet" />
                    </td>
                  </tr>
                );
              })}
            </Table>
            <Pager path={workflowPath(props.workflow.id)} query={{}} after={props.after} next={props.next} />
          </>
        )
        : (
          <p class="empty">
            {props.after
              ? "No older executions."
              : "No executions yet: each contact a start reaches gets one, listed here with its progress."}
          </p>
        )}
    </section>
  );
}

/** A workflow's page: activation, statistics, editable steps and execution history. */
export function WorkflowPage(
  props: {
    user: SessionUser;
    workflow: Workflow;
    /** None on the history's later pages (the first page has them). */
    stats?: Statistics;
    templates: StepTemplates;
    executions: ExecutionView[];
    /** The email of each execution's contact (by id). */
    contacts: Map<string, string>;
    next: string | null;
    after?: string;
    notice?: Notice;
    refused?: Refused;
    /** A form posted from an older version of the page. */
    stale?: boolean;
  },
) {
  const { user, workflow: w } = props;
  const version = String(w.updated_at.getTime());
  return (
    <Page title={`Workflow ${w.name}`} user={user} active="workflows">
      <p>
        <a href={WORKFLOWS}>All workflows</a>
      </p>
      <h1>
        Workflow {w.name} <ActiveBadge active={w.is_active} />
      </h1>
      {props.notice && <p class="card notice" role="status" id="notice">{NOTICES[props.notice]}</p>}
      {props.stale && (
        <p class="card alert" role="alert" id="stale">
          The workflow changed since this page was loaded (in another tab or through the API), so nothing was saved. The
          page now shows it as it is: make the change again.
        </p>
      )}
      <section class="card" aria-labelledby="about-title">
        <h2 id="about-title">Starts</h2>
        <p>
          {w.description && (
            <>
              {w.description}
              <br />
            </>
          )}
          The event <code>{w.event_type}</code> starts it (<code>POST /api/v1/events/send</code>), as does{" "}
          <code>POST /api/v1/workflows/trigger</code> with <code>workflow_id</code> <code>{w.id}</code>.
        </p>
        <form method="post" action={`${workflowPath(w.id)}/${w.is_active ? "deactivate" : "activate"}`}>
          <CsrfField user={user} />
          <input type="hidden" name="version" value={version} />
          {w.is_active
            ? <button type="submit" class="danger">Deactivate</button>
            : <button type="submit">Activate</button>}
        </form>
      </section>
      {props.stats ? <StatisticsCard stats={props.stats} /> : (
        <p class="card" id="statistics">
          The statistics are on <a href={workflowPath(w.id)}>the first page</a> of the history.
        </p>
      )}
      <StepsCard user={user} workflow={w} templates={props.templates} refused={props.refused} />
      <ExecutionsCard
        workflow={w}
        executions={props.executions}
        contacts={props.contacts}
        next={props.next}
        after={props.after}
      />
    </Page>
  );
}

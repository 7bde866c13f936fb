import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { findTrigger, type TriggerView } from "../triggers/tracking.ts";
import { PROGRESS_SCRIPT_PATH } from "./assets.ts";
import type { DashboardEnv } from "./env.ts";
import { BASE, MessagePage, Page, When } from "./layout.tsx";
import { Table } from "./table.tsx";
import { Badge, Pager } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";
import { listTeamTriggers, parseTriggerCursor, triggerCursor, type TriggerListRow } from "./trigger_list.ts";

/** Triggers on one page of the list. */
const PAGE_SIZE = 50;

/** The counts of a send, in the order the pages show them. */
const COUNTS = [
  ["total_contacts", "Contacts"],
  ["sent", "Sent"],
  ["failed", "Failed"],
  ["filtered", "Filtered"],
] as const;

const isFinal = (status: string) => status === "completed" || status === "failed";

function TriggerTable(props: { rows: TriggerListRow[] }) {
  return (
    <Table caption="Sends" headings={["Started", "Kind", "Status", ...COUNTS.map(([, label]) => label)]}>
      {props.rows.map((t) => (
        <tr key={t.id}>
          <td data-label="Started">
            <a href={`${BASE}/sends/${t.id}`}>
              <When at={t.created_at} />
            </a>
          </td>
          <td data-label="Kind">{t.flow_type === "workflow" ? "workflow" : t.trigger_type}</td>
          <td data-label="Status">
            <Badge value={t.status} />
          </td>
          {COUNTS.map(([name, label]) => (
            <td data-label={label} class="number" key={name}>{isFinal(t.status) ? t[name] : "…"}</td>
          ))}
        </tr>
      ))}
    </Table>
  );
}

function SendsPage(props: { user: SessionUser; rows: TriggerListRow[]; next?: string; after?: string }) {
  return (
    <Page title="Sends" user={props.user} active="sends">
      <h1>Sends</h1>
      <section class="card" aria-labelledby="sends-title">
        <h2 id="sends-title">Triggers, newest first</h2>
        {props.rows.length > 0
          ? (
            <>
              <p class="muted">A send still running shows its live counts on its own page.</p>
              <TriggerTable rows={props.rows} />
              <Pager path={`${BASE}/sends`} query={{}} after={props.after} next={props.next ?? null} />
            </>
          )
          : (
            <div class="empty">
              <p>
                <strong>{props.after ? "No older sends." : "No sends yet."}</strong>
              </p>
              <p>
                Send a first message with <code>POST /api/v1/messages/send</code>{" "}
                and a key from the API keys page: each send, trigger and workflow start appears here with its progress.
              </p>
            </div>
          )}
      </section>
    </Page>
  );
}

/** The counts of a trigger or an execution, each in an element the progress script finds by name. */
function Counts(props: { counts: Record<(typeof COUNTS)[number][0], number> }) {
  return (
    <dl class="counts">
      {COUNTS.map(([name, label]) => (
        <div key={name}>
          <dt>{label}</dt>
          <dd data-count={name}>{props.counts[name]}</dd>
        </div>
      ))}
    </dl>
  );
}

function ExecutionTable(props: { trigger: TriggerView }) {
  return (
    <Table
      caption="Executions by channel"
      headings={["Channel", "Status", ...COUNTS.map(([, label]) => label), "Completed"]}
    >
      {props.trigger.executions.map((e) => (
        <tr key={e.id} data-execution={e.id}>
          <td data-label="Channel">
            {e.channel} <code class="muted">{e.id}</code>
          </td>
          <td data-label="Status" data-field="status">{e.status}</td>
          <td data-label="Contacts" class="number" data-count="total_contacts">{e.total_contacts}</td>
          <td data-label="Sent" class="number" data-count="sent">{e.sent_count}</td>
          <td data-label="Failed" class="number" data-count="failed">{e.failed_count}</td>
          <td data-label="Filtered" class="number" data-count="filtered">{e.filtered_count}</td>
          <td data-label="Completed" data-field="completed_at">
            <When at={e.completed_at} never="Not yet" />
          </td>
        </tr>
      ))}
    </Table>
  );
}

function TriggerPage(props: { user: SessionUser; trigger: TriggerView }) {
  const { trigger: t } = props;
  const done = t.summary.sent + t.summary.failed + t.summary.filtered;
  const final = isFinal(t.status);
  return (
    <Page title="Send" user={props.user} active="sends" scripts={final ? [] : [PROGRESS_SCRIPT_PATH]}>
      <p>
        <a href={`${BASE}/sends`}>All sends</a>
      </p>
      <h1>
        {t.flow_type === "workflow" ? "Workflow start" : `Send (${t.trigger_type})`} <code>{t.id}</code>
      </h1>
      <section
        class="card"
        id="progress"
        aria-labelledby="progress-title"
        data-src={`${BASE}/sends/${t.id}/progress`}
        data-status={t.status}
      >
        <h2 id="progress-title">Progress</h2>
        <p>
          Status: <strong data-field="status" aria-live="polite">{t.status}</strong>
          {!final && <span class="muted" data-while-running>(the counts below update as it runs)</span>}
        </p>
        <label for="progress-bar">Handled so far</label>
        <progress
          id="progress-bar"
          max={Math.max(1, t.summary.total_contacts)}
          value={final ? Math.max(1, t.summary.total_contacts) : done}
        />
        <Counts counts={t.summary} />
        {t.note && <p class="muted">{t.note}</p>}
        <p class="muted">
          Started <When at={t.started_at} never="not yet" />
          {t.scheduled_for && (
            <>
              {" "}· scheduled for <When at={t.scheduled_for} />
            </>
          )} · completed{" "}
          <span data-field="completed_at">
            <When at={t.completed_at} never="not yet" />
          </span>. The API shows the same at <code>GET /api/v1/triggers/{t.id}</code>.
        </p>
      </section>
      <section class="card" aria-labelledby="executions-title">
        <h2 id="executions-title">Executions</h2>
        {t.executions.length > 0 ? <ExecutionTable trigger={t} /> : (
          <p class="empty">
            {t.flow_type === "workflow"
              ? "A workflow's messages are sent by its steps: its counts above add them up."
              : "No execution yet: the worker has not taken this send up."}
          </p>
        )}
      </section>
    </Page>
  );
}

/** The JSON the progress script polls: the trigger view of the API's GET /triggers/{id}, counts and executions. */
function progressBody(t: TriggerView) {
  return {
    id: t.id,
    status: t.status,
    summary: t.summary,
    completed_at: t.completed_at,
    executions: t.executions.map((e) => ({
      id: e.id,
      channel: e.channel,
      status: e.status,
      completed_at: e.completed_at,
      total_contacts: e.total_contacts,
      sent: e.sent_count,
      failed: e.failed_count,
      filtered: e.filtered_count,
    })),
  };
}

/**
 * The sends pages: the team's triggers in keyset pages, and a trigger's page whose counters a small
 * script keeps live from a JSON view (the API's own trigger view, findTrigger) while a fan-out runs.
 */
export function sendsRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  app.get("/sends", async (c) => {
    const user = c.get("user");
    const after = parseTriggerCursor(c.req.query("after"));
    const { rows, hasMore } = await listTeamTriggers(deps.sql, user.teamId, { limit: PAGE_SIZE, after });
    const next = hasMore ? triggerCursor(rows.at(-1)!) : undefined;
    const shown = after && c.req.query("after");
    return c.html(<SendsPage user={user} rows={rows} next={next} after={shown} />);
  });

  app.get("/sends/:id", async (c) => {
    const user = c.get("user");
    const trigger = await findTrigger(deps, user.teamId, c.req.param("id"));
    if (!trigger) {
      const message = "This team has no send with that id. Go back to the list of sends.";
      return c.html(<MessagePage title="Send not found" message={message} user={user} />, 404);
    }
    return c.html(<TriggerPage user={user} trigger={trigger} />);
  });

  app.get("/sends/:id/progress", async (c) => {
    const trigger = await findTrigger(deps, c.get("user").teamId, c.req.param("id"));
    if (!trigger) return c.json({ error: "Send not found" }, 404);
    return c.json(progressBody(trigger));
  });

  return app;
}

import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { parseTimestamp } from "../../shared/timestamps.ts";
import type { DashboardEnv } from "./env.ts";
import { BASE, MessagePage, Page, When } from "./layout.tsx";
import {
  findMessage,
  type KeysetPage,
  listMessages,
  type MessageFilters,
  type MessageListRow,
} from "./message_queries.ts";
import { MessageDetailPage } from "./message_page.tsx";
import { Pager } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";
import { Status, usd } from "./status.tsx";
import { Table } from "./table.tsx";

/** Messages a page of the activity log shows. */
export const MESSAGES_PER_PAGE = 50;

const CHANNEL_OPTIONS = ["email", "sms", "whatsapp", "push"];
const STATUS_OPTIONS = ["pending", "sent", "failed", "filtered", "delivered", "read", "complained"];

/** The activity log's query string as its form sends it. */
interface LogQuery {
  channel?: string;
  status?: string;
  recipient?: string;
  template?: string;
  trigger?: string;
  from?: string;
  to?: string;
  after?: string;
}

/** A date field's value (a day, or any timestamp the API accepts) as a time; undefined when empty or unreadable. */
function dateOf(value: string | undefined, endOfDay: boolean): Date | undefined {
  if (!value) return undefined;
  const day = /^\d{4}-\d\d-\d\d$/.test(value);
  const ms = parseTimestamp(day ? `${value}T00:00:00Z` : value);
  if (ms === undefined || ms === null) return undefined;
  return new Date(day && endOfDay ? ms + 86_400_000 : ms);
}

function filtersOf(q: LogQuery): MessageFilters {
  return {
    channel: CHANNEL_OPTIONS.includes(q.channel ?? "") ? q.channel : undefined,
    status: STATUS_OPTIONS.includes(q.status ?? "") ? q.status : undefined,
    recipient: q.recipient?.trim() || undefined,
    template: q.template?.trim() || undefined,
    triggerId: q.trigger?.trim() || undefined,
    from: dateOf(q.from, false),
    // A day given as "to" includes that day.
    to: dateOf(q.to, true),
  };
}

/** A table of messages, each linking to its page (the activity log and a contact's history). */
export function MessageTable(props: { messages: MessageListRow[] }) {
  return (
    <Table headings={["Created", "Channel", "Recipient", "Status", "Cost"]}>
      {props.messages.map((m) => (
        <tr key={m.id}>
          <td data-label="Created">
            <a href={`${BASE}/messages/${m.id}`} aria-label={`Message ${m.id}`}>
              <When at={m.created_at} />
            </a>
          </td>
          <td data-label="Channel">{m.channel}</td>
          <td data-label="Recipient">{m.to_address ?? <span class="muted">none</span>}</td>
          <td data-label="Status">
            <Status m={m} />
          </td>
          <td data-label="Cost">{usd(m.cost_micros)}</td>
        </tr>
      ))}
    </Table>
  );
}

function Choice(props: { id: string; label: string; options: string[]; value?: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.id}>
        <option value="">Any</option>
        {props.options.map((o) => <option key={o} value={o} selected={props.value === o}>{o}</option>)}
      </select>
    </div>
  );
}

function Text(props: { id: string; label: string; value?: string; type?: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <input id={props.id} name={props.id} type={props.type ?? "text"} value={props.value ?? ""} />
    </div>
  );
}

function LogFilters(props: { query: LogQuery }) {
  const q = props.query;
  return (
    <form method="get" action={`${BASE}/messages`} class="row" role="search">
      <Choice id="channel" label="Channel" options={CHANNEL_OPTIONS} value={q.channel} />
      <Choice id="status" label="Status" options={STATUS_OPTIONS} value={q.status} />
      <Text id="recipient" label="Recipient" value={q.recipient} />
      <Text id="template" label="Template key" value={q.template} />
      <Text id="trigger" label="Trigger id" value={q.trigger} />
      <Text id="from" label="From (day)" value={q.from} type="date" />
      <Text id="to" label="To (day)" value={q.to} type="date" />
      <button type="submit">Filter</button>
    </form>
  );
}

function LogPage(props: { user: SessionUser; query: LogQuery; page: KeysetPage<MessageListRow> }) {
  const { user, query, page } = props;
  const filtered = Object.entries(query).some(([k, v]) => k !== "after" && v);
  return (
    <Page title="Messages" user={user} active="messages">
      <h1>Messages</h1>
      <section class="card" aria-labelledby="log-title">
        <h2 id="log-title">Activity log</h2>
        <p class="muted">Every message of your team, newest first.</p>
        <LogFilters query={query} />
        {page.rows.length > 0 ? <MessageTable messages={page.rows} /> : filtered || query.after
          ? (
            <p class="empty">
              No message matches these filters. <a href={`${BASE}/messages`}>Clear the filters</a>.
            </p>
          )
          : (
            <div class="empty">
              <p>
                <strong>No messages yet.</strong>
              </p>
              <p>
                Send your first one with <code>POST /api/v1/messages</code>{" "}
                (email) or the SMS, WhatsApp and push endpoints, using a key from the{" "}
                <a href={`${BASE}/keys`}>API keys</a>{" "}
                page: a test key sends to the outbox only, and the message shows up here.
              </p>
            </div>
          )}
        <Pager path={`${BASE}/messages`} query={{ ...query, after: undefined }} after={query.after} next={page.next} />
      </section>
    </Page>
  );
}

/** The activity log of every message of the team, and a message's page. */
export function messagesRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  app.get("/messages", async (c) => {
    const user = c.get("user");
    const query: LogQuery = c.req.query();
    const after = query.after || undefined;
    const page = await listMessages(deps.sql, user.teamId, {
      limit: MESSAGES_PER_PAGE,
      after,
      filters: filtersOf(query),
    });
    return c.html(<LogPage user={user} query={query} page={page} />);
  });

  app.get("/messages/:id", async (c) => {
    const user = c.get("user");
    const m = await findMessage(deps.sql, user.teamId, c.req.param("id"));
    if (!m) {
      const message = "Your team has no message with this id.";
      return c.html(<MessagePage title="Message not found" message={message} user={user} />, 404);
    }
    return c.html(<MessageDetailPage user={user} m={m} />);
  });

  return app;
}

import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { toUsd } from "../../shared/money.ts";
import { parseTimestamp } from "../../shared/timestamps.ts";
import type { DashboardEnv } from "./env.ts";
import { BASE, MessagePage, Page, When } from "./layout.tsx";
import {
  findMessage,
  type KeysetPage,
  listMessages,
  type MessageDetail,
  type MessageFilters,
  type MessageListRow,
} from "./message_queries.ts";
import { Badge, Pager } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";
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

/** Micro-dollars as dollars, to the tenth of a cent where it matters. */
export function usd(micros: number): string {
  return `$${toUsd(micros).toFixed(micros % 10_000 === 0 ? 2 : 4)}`;
}

/** A message's status: the pipeline's, followed by the provider's report when there is one. */
function Status(props: { m: { status: string; delivery_status: string | null } }) {
  return (
    <>
      <Badge value={props.m.status} />
      {props.m.delivery_status && (
        <>
          {" "}
          <Badge value={props.m.delivery_status} />
        </>
      )}
    </>
  );
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

function Fact(props: { term: string; children?: unknown }) {
  return (
    <div>
      <dt>{props.term}</dt>
      <dd>{props.children ?? <span class="muted">none</span>}</dd>
    </div>
  );
}

/** What was sent: the copy kept in the outbox, else what the request gave (a template key, a subject …). */
function Content(props: { m: MessageDetail }) {
  const { m } = props;
  if (m.in_outbox) {
    return (
      <>
        {m.outbox_subject && (
          <p>
            <strong>Subject:</strong> <span id="message-subject">{m.outbox_subject}</span>
          </p>
        )}
        <pre class="content" id="message-body">{m.outbox_body ?? ""}</pre>
      </>
    );
  }
  const content = m.content ?? {};
  const given = Object.entries(content).filter(([k, v]) => k !== "channel" && v !== undefined && v !== null);
  return (
    <>
      <p class="muted">
        The rendered text of a message handed to a provider is not kept (the provider has it); this is what the send
        asked for.
      </p>
      {given.length > 0
        ? (
          <dl class="facts">
            {given.map(([k, v]) => (
              <Fact key={k} term={k}>
                <code>{typeof v === "string" ? v : JSON.stringify(v)}</code>
              </Fact>
            ))}
          </dl>
        )
        : <p class="empty">The send's request is no longer kept.</p>}
    </>
  );
}

/** The webhook events this message gave rise to, as its own times record them. */
function eventsOf(m: MessageDetail): [string, Date][] {
  const events: [string, Date | null][] = [
    [
      m.status === "failed" ? "message.failed" : "message.sent",
      m.status === "pending" ? null : m.sent_at ?? m.created_at,
    ],
    ["message.delivered", m.delivered_at],
    ["message.read", m.read_at],
  ];
  if (m.status === "filtered") events.shift();
  return events.filter((e): e is [string, Date] => e[1] !== null);
}

function MessageDetailPage(props: { user: SessionUser; m: MessageDetail }) {
  const { user, m } = props;
  const events = eventsOf(m);
  return (
    <Page title={`Message ${m.id}`} user={user} active="messages">
      <p>
        <a href={`${BASE}/messages`}>← Messages</a>
      </p>
      <h1>Message {m.id}</h1>
      <section class="card" aria-labelledby="summary-title">
        <h2 id="summary-title">Summary</h2>
        <dl class="facts">
          <Fact term="Channel">{m.channel}</Fact>
          <Fact term="Recipient">{m.to_address}</Fact>
          <Fact term="Contact">
            {m.contact_id && <a href={`${BASE}/contacts/${m.contact_id}`}>{m.contact_id}</a>}
          </Fact>
          <Fact term="Status">
            <Status m={m} />
          </Fact>
          <Fact term="Created">
            <When at={m.created_at} />
          </Fact>
          <Fact term="Sent">{m.sent_at && <When at={m.sent_at} />}</Fact>
          <Fact term="Provider">{m.provider}</Fact>
          <Fact term="Provider id">{m.provider_message_id && <code>{m.provider_message_id}</code>}</Fact>
          <Fact term="Cost">{usd(m.cost_micros)}{m.sandbox ? " (test key: never charged)" : ""}</Fact>
          <Fact term="Template">
            {m.template_key && (
              <a href={`${BASE}/messages?template=${encodeURIComponent(m.template_key)}`}>
                <code>{m.template_key}</code>
              </a>
            )}
          </Fact>
          <Fact term="Trigger">
            <a href={`${BASE}/messages?trigger=${m.trigger_id}`}>
              <code>{m.trigger_id}</code>
            </a>
          </Fact>
          {m.error && <Fact term="Error">{m.error}</Fact>}
          {m.note && <Fact term="Note">{m.note}</Fact>}
          {m.missing_variables && <Fact term="Variables without a value">{m.missing_variables}</Fact>}
        </dl>
      </section>
      <section class="card" aria-labelledby="content-title">
        <h2 id="content-title">Content</h2>
        <Content m={m} />
      </section>
      <section class="card" aria-labelledby="reports-title">
        <h2 id="reports-title">Delivery reports and webhook events</h2>
        {events.length > 0
          ? (
            <ol class="events">
              {events.map(([type, at]) => (
                <li key={type}>
                  <code>{type}</code> <When at={at} />
                </li>
              ))}
            </ol>
          )
          : <p class="empty">Nothing yet: the message is waiting to be sent.</p>}
        <p class="muted">
          Events go to your webhook endpoints that subscribe to them; a provider's delivery and read reports arrive when
          the provider sends them.
        </p>
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

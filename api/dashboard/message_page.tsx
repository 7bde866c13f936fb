import { Fact, Facts } from "./facts.tsx";
import { BASE, Page, When } from "./layout.tsx";
import type { MessageDetail } from "./message_queries.ts";
import type { Attempt } from "../../shared/providers/failover.ts";
import type { SessionUser } from "./sessions.ts";
import { Status, usd } from "./status.tsx";

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
          <Facts>
            {given.map(([k, v]) => (
              <Fact key={k} term={k}>
                <code>{typeof v === "string" ? v : JSON.stringify(v)}</code>
              </Fact>
            ))}
          </Facts>
        )
        : <p class="empty">The send's request is no longer kept.</p>}
    </>
  );
}

/** Each hand-over to the team's channel accounts, in order; which one sent the message is marked. */
function Attempts(props: { attempts: Attempt[] }) {
  return (
    <ol class="attempts" id="message-attempts">
      {props.attempts.map((a, i) => (
        <li key={i}>
          <code>{a.provider}</code> (account <code>{a.account}</code>):{" "}
          {a.outcome === "sent" ? <strong>sent it</strong> : a.outcome}
          {a.provider_message_id && (
            <>
              , id <code>{a.provider_message_id}</code>
            </>
          )}
          {a.error && <span class="muted">: {a.error}</span>}
        </li>
      ))}
    </ol>
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

/** A message's page: what it is, what was sent, and what happened to it. */
export function MessageDetailPage(props: { user: SessionUser; m: MessageDetail }) {
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
        <Facts>
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
        </Facts>
      </section>
      {m.attempts && m.attempts.length > 0 && (
        <section class="card" aria-labelledby="attempts-title">
          <h2 id="attempts-title">Attempts</h2>
          <Attempts attempts={m.attempts} />
          <p class="muted">
            The team's channel accounts are tried in order: a provider that certainly did not take the message passes it
            to the next.
          </p>
        </section>
      )}
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

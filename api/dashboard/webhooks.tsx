import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { invalidateEndpointCache } from "../../shared/webhook_events.ts";
import {
  type AttemptRow,
  deliveredEvents,
  type EndpointRow,
  findEndpoint,
  listAttempts,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
} from "../webhooks/queries.ts";
import { Table } from "./table.tsx";
import type { DashboardEnv } from "./env.ts";
import { BASE, CsrfField, MessagePage, Page, When } from "./layout.tsx";
import { ownerOnly } from "./owner_only.tsx";
import { Badge, Pager } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";
import { retryDelivery } from "./webhook_retry.ts";
import { CreateEndpointForm, parseEndpointForm } from "./webhook_form.tsx";
import { registerEndpoint } from "../webhooks/routes.ts";
import { AppError } from "../../shared/errors.ts";

/** Delivery attempts on one page. */
const PAGE_SIZE = 25;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Attempt ids are ulids. */
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function EndpointState(props: { endpoint: EndpointRow }) {
  const e = props.endpoint;
  if (e.is_active) return <Badge value="active">active</Badge>;
  return <Badge value="failed">{e.disabled_reason === "gone" ? "off: it answered 410 Gone" : "off"}</Badge>;
}

function EndpointTable(props: { endpoints: EndpointRow[] }) {
  return (
    <Table headings={["URL", "Events", "State", "Created"]}>
      {props.endpoints.map((e) => (
        <tr key={e.id}>
          <td data-label="URL">
            <a href={`${BASE}/webhooks/${e.id}`}>{e.url}</a>
          </td>
          <td data-label="Events">{e.events ? e.events.join(", ") : "every event"}</td>
          <td data-label="State">
            <EndpointState endpoint={e} />
          </td>
          <td data-label="Created">
            <When at={e.created_at} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

function WebhooksPage(props: { user: SessionUser; endpoints: EndpointRow[]; error?: string; url?: string }) {
  return (
    <Page title="Webhooks" user={props.user} active="webhooks">
      <h1>Webhooks</h1>
      <section class="card" aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints</h2>
        {props.endpoints.length > 0 ? <EndpointTable endpoints={props.endpoints} /> : (
          <div class="empty">
            <p>
              <strong>No webhook endpoints yet.</strong>
            </p>
            <p>
              Add your first HTTPS endpoint below (or with <code>POST /api/v1/webhooks</code>{" "}
              and a secret key): its deliveries, their failures and a retry button appear here.
            </p>
          </div>
        )}
      </section>
      {props.user.role === "owner" && <CreateEndpointForm user={props.user} error={props.error} url={props.url} />}
    </Page>
  );
}

/** What the endpoint page says at the top after an action. */
type Notice = { secret: string; created?: boolean } | { retried: string } | { enabled: true };

function DeliveryTable(
  props: { user: SessionUser; endpoint: EndpointRow; attempts: AttemptRow[]; delivered: Set<string> },
) {
  const { endpoint, user } = props;
  return (
    <Table headings={["When", "Event", "Attempt", "Outcome", "Next retry"]} actions>
      {props.attempts.map((a) => (
        <tr key={a.id} data-attempt={a.id}>
          <td data-label="When">
            <When at={a.created_at} />
          </td>
          <td data-label="Event">
            {a.event_type} <code class="muted">{a.event_id}</code>
          </td>
          <td data-label="Attempt" class="number">{a.attempt}</td>
          <td data-label="Outcome">
            <Badge value={a.status} /> {a.response_status !== null && <code>HTTP {a.response_status}</code>}{" "}
            {a.error && a.error !== `HTTP ${a.response_status}` && <span class="muted">{a.error}</span>}
          </td>
          <td data-label="Next retry">
            <When at={a.next_retry_at} never="None" />
          </td>
          <td>
            {a.status === "failed" && !props.delivered.has(a.event_id) && endpoint.is_active && (
              <form method="post" action={`${BASE}/webhooks/${endpoint.id}/deliveries/${a.id}/retry`}>
                <CsrfField user={user} />
                <button type="submit" class="quiet" aria-label={`Retry ${a.event_id} now`}>Retry now</button>
              </form>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}

function EndpointPage(
  props: {
    user: SessionUser;
    endpoint: EndpointRow;
    attempts: AttemptRow[];
    delivered: Set<string>;
    next: string | null;
    after?: string;
    notice?: Notice;
  },
) {
  const { user, endpoint: e, notice } = props;
  const owner = user.role === "owner";
  return (
    <Page title="Webhook endpoint" user={user} active="webhooks">
      <p>
        <a href={`${BASE}/webhooks`}>All endpoints</a>
      </p>
      <h1>
        Endpoint <code>{e.url}</code>
      </h1>
      {notice && "secret" in notice && (
        <section class="card notice" role="status" aria-labelledby="secret-title">
          <h2 id="secret-title">{notice.created ? "The endpoint's signing secret" : "The new signing secret"}</h2>
          <p>
            Copy it now: it is shown only this once. {notice.created
              ? "Your receiver checks each delivery's signature with it."
              : "The old secret also signs deliveries for the next 24 hours."}
          </p>
          <code class="secret" id="new-secret">{notice.secret}</code>
        </section>
      )}
      {notice && "retried" in notice && (
        <p class="card notice" role="status">
          Event <code>{notice.retried}</code>{" "}
          is on its way again: its attempt appears below once the endpoint has answered.
        </p>
      )}
      {notice && "enabled" in notice && (
        <p class="card notice" role="status">The endpoint is on again: new events are delivered to it.</p>
      )}
      <section class="card" aria-labelledby="endpoint-title">
        <h2 id="endpoint-title">Settings</h2>
        <p>
          <EndpointState endpoint={e} /> · events: {e.events ? e.events.join(", ") : "every event"} · created{" "}
          <When at={e.created_at} />
        </p>
        {!e.is_active && (
          <form method="post" action={`${BASE}/webhooks/${e.id}/enable`}>
            <CsrfField user={user} />
            <button type="submit">Turn it on again</button>
          </form>
        )}
        {owner
          ? (
            <form method="post" action={`${BASE}/webhooks/${e.id}/rotate-secret`}>
              <CsrfField user={user} />
              <p class="muted">
                Rotating gives a new secret; deliveries carry signatures by both for 24 hours, so that your receiver can
                switch without losing any.
              </p>
              <button type="submit" class="danger">Rotate the signing secret</button>
            </form>
          )
          : <p class="muted">An owner of the team can rotate this endpoint's signing secret.</p>}
      </section>
      <section class="card" aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Deliveries, newest first</h2>
        {props.attempts.length > 0
          ? (
            <>
              <DeliveryTable user={user} endpoint={e} attempts={props.attempts} delivered={props.delivered} />
              <Pager path={`${BASE}/webhooks/${e.id}`} query={{}} after={props.after} next={props.next} />
            </>
          )
          : (
            <p class="empty">
              {props.after
                ? "No older deliveries."
                : "No deliveries yet: events the endpoint subscribes to are delivered as they happen."}
            </p>
          )}
      </section>
    </Page>
  );
}

/**
 * The webhooks pages: the team's endpoints, each with its delivery attempts (keyset pages), a retry
 * of a failed delivery through the worker's own delivery job, and secret rotation (owners: the
 * secret is a credential, like a key) by the API's own code.
 */
export function webhooksRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  /** The team's endpoint named in the path; undefined for another team's or an unknown one (a 404). */
  const endpointOf = async (user: SessionUser, id: string | undefined) =>
    id && UUID.test(id) ? await findEndpoint(deps.sql, user.teamId, id.toLowerCase()) : undefined;

  const notFound = (user: SessionUser) => (
    <MessagePage title="Endpoint not found" message="This team has no webhook endpoint with that id." user={user} />
  );

  const endpointPage = async (user: SessionUser, endpoint: EndpointRow, after?: string, notice?: Notice) => {
    const { rows, hasMore } = await listAttempts(deps.sql, endpoint.id, { limit: PAGE_SIZE, startingAfter: after });
    const failed = [...new Set(rows.filter((a) => a.status === "failed").map((a) => a.event_id))];
    const delivered = failed.length > 0 ? await deliveredEvents(deps.sql, endpoint.id, failed) : new Set<string>();
    const next = hasMore ? rows.at(-1)!.id : null;
    return (
      <EndpointPage
        user={user}
        endpoint={endpoint}
        attempts={rows}
        delivered={delivered}
        next={next}
        after={after}
        notice={notice}
      />
    );
  };

  app.get("/webhooks", async (c) => {
    const user = c.get("user");
    return c.html(<WebhooksPage user={user} endpoints={await listEndpoints(deps.sql, user.teamId)} />);
  });

  app.get("/webhooks/:id", async (c) => {
    const user = c.get("user");
    const endpoint = await endpointOf(user, c.req.param("id"));
    if (!endpoint) return c.html(notFound(user), 404);
    const after = c.req.query("after");
    const retried = c.req.query("retried");
    const notice = retried ? { retried } : c.req.query("enabled") ? { enabled: true as const } : undefined;
    return c.html(await endpointPage(user, endpoint, after && ULID.test(after) ? after : undefined, notice));
  });

  app.post("/webhooks/:id/deliveries/:attempt/retry", async (c) => {
    const user = c.get("user");
    const endpoint = await endpointOf(user, c.req.param("id"));
    if (!endpoint) return c.html(notFound(user), 404);
    const eventId = await retryDelivery(deps, endpoint, c.req.param("attempt"));
    return c.redirect(`${BASE}/webhooks/${endpoint.id}?${new URLSearchParams({ retried: eventId })}`, 303);
  });

  app.post("/webhooks/:id/enable", async (c) => {
    const user = c.get("user");
    const endpoint = await endpointOf(user, c.req.param("id"));
    if (!endpoint) return c.html(notFound(user), 404);
    await updateEndpoint(deps.sql, user.teamId, endpoint.id, { is_active: true });
    invalidateEndpointCache(user.teamId);
    return c.redirect(`${BASE}/webhooks/${endpoint.id}?enabled=1`, 303);
  });

  app.post("/webhooks", ownerOnly("add webhook endpoints"), async (c) => {
    const user = c.get("user");
    const form = parseEndpointForm(await c.req.parseBody({ all: true }));
    const page = async (error: string) => {
      const endpoints = await listEndpoints(deps.sql, user.teamId);
      return c.html(<WebhooksPage user={user} endpoints={endpoints} error={error} url={form.url} />, 400);
    };
    if (!form.body) return await page(form.error);
    try {
      const created = await registerEndpoint(deps, user.teamId, form.body);
      return c.html(await endpointPage(user, created, undefined, { secret: created.secret, created: true }), 201);
    } catch (error) {
      // The API's refusals (a private address, too many endpoints) as the form's message.
      if (error instanceof AppError && error.status === 400) return await page(`Not added: ${error.message}.`);
      throw error;
    }
  });

  app.post("/webhooks/:id/rotate-secret", ownerOnly("rotate a webhook's signing secret"), async (c) => {
    const user = c.get("user");
    const endpoint = await endpointOf(user, c.req.param("id"));
    if (!endpoint) return c.html(notFound(user), 404);
    const rotated = (await rotateEndpointSecret(deps.sql, user.teamId, endpoint.id, deps.now()))!;
    return c.html(await endpointPage(user, rotated, undefined, { secret: rotated.secret }));
  });

  return app;
}

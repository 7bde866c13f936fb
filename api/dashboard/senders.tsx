import { Hono } from "hono";
import { IdentityBody } from "../admin/schemas.ts";
import type { Deps } from "../../shared/deps.ts";
import { isEmail } from "../../shared/email.ts";
import { ConflictError, ValidationError } from "../../shared/errors.ts";
import { RecordKey } from "../../shared/http/schemas.ts";
import {
  deleteIdentity,
  findIdentity,
  type Identity,
  listIdentities,
  upsertIdentity,
} from "../../shared/identities.ts";
import { CHANNELS } from "../../shared/contacts/preferences.ts";
import type { Channel } from "../../shared/providers/types.ts";
import { listTeamDomains } from "./domain_queries.ts";
import { domainRoutes, DomainsSection, verifiesWithResend } from "./domains.tsx";
import { Table } from "./table.tsx";
import type { DashboardEnv } from "./env.ts";
import { field } from "./form.ts";
import { BASE, CsrfField, MessagePage, Page } from "./layout.tsx";
import type { SessionUser } from "./sessions.ts";
import type { DomainRow } from "./domain_queries.ts";

/** What a sender is on each channel, as the forms ask for it. */
const FROM_LABELS: Record<Channel, string> = {
  email: "Email address",
  sms: "Sender id or phone number",
  whatsapp: "WhatsApp number",
  push: "App",
};

function isChannel(value: string): value is Channel {
  return (CHANNELS as readonly string[]).includes(value);
}

/** The identity path of the dashboard. */
function identityPath(i: Pick<Identity, "channel" | "id">): string {
  return `${BASE}/senders/identities/${i.channel}/${encodeURIComponent(i.id)}`;
}

/** The address's domain when it is an email address on no verified domain of the team. */
function unverifiedDomain(identity: Identity, domains: DomainRow[]): string | undefined {
  if (identity.channel !== "email") return undefined;
  const domain = identity.from_address.split("@").pop()?.toLowerCase() ?? "";
  return domains.some((d) => d.domain === domain && d.verified) ? undefined : domain;
}

function IdentityTable(props: { user: SessionUser; identities: Identity[]; domains: DomainRow[] }) {
  return (
    <Table headings={["Channel", "Id", "From", "Name", "Countries", "Default"]} actions>
      {props.identities.map((i) => {
        const unverified = unverifiedDomain(i, props.domains);
        return (
          <tr key={`${i.channel}/${i.id}`} data-identity={`${i.channel}/${i.id}`}>
            <td data-label="Channel">{i.channel}</td>
            <td data-label="Id">
              <code>{i.id}</code>
            </td>
            <td data-label="From">
              {i.from_address}
              {unverified && <span class="muted">{` (not sendable: ${unverified} is not verified)`}</span>}
            </td>
            <td data-label="Name">{i.name ?? ""}</td>
            <td data-label="Countries">{i.countries ? i.countries.join(", ") : "all"}</td>
            <td data-label="Default">{i.is_default ? "yes" : "no"}</td>
            <td>
              <div class="row">
                <a href={identityPath(i)} aria-label={`Edit ${i.channel} sender ${i.id}`}>Edit</a>
                <form method="post" action={`${identityPath(i)}/delete`}>
                  <CsrfField user={props.user} />
                  <button type="submit" class="danger" aria-label={`Delete ${i.channel} sender ${i.id}`}>
                    Delete
                  </button>
                </form>
              </div>
            </td>
          </tr>
        );
      })}
    </Table>
  );
}

/** The fields of an identity: a new one's (channel and id too) or an existing one's. */
function IdentityFields(props: { identity?: Identity }) {
  const i = props.identity;
  return (
    <>
      {!i && (
        <>
          <div class="field">
            <label for="channel">Channel</label>
            <select id="channel" name="channel">
              {CHANNELS.map((c) => <option key={c} value={c}>{c}</option>)}
            </select>
          </div>
          <div class="field">
            <label for="identity-id">Id (what a send's identity_id names)</label>
            <input id="identity-id" name="id" required maxlength={128} autocomplete="off" />
          </div>
        </>
      )}
      <div class="field">
        <label for="from">From (email address, sender id or number, WhatsApp number, app)</label>
        <input id="from" name="from" required maxlength={320} value={i?.from_address} autocomplete="off" />
      </div>
      <div class="field">
        <label for="name">Name shown to recipients (optional)</label>
        <input id="name" name="name" maxlength={200} value={i?.name ?? undefined} />
      </div>
      <div class="field">
        <label for="countries">Countries served (ISO codes, comma-separated; empty serves all)</label>
        <input id="countries" name="countries" value={i?.countries?.join(", ")} placeholder="US, CA" />
      </div>
      <div class="field check">
        <input id="is-default" name="is_default" type="checkbox" value="on" checked={i?.is_default} />
        <label for="is-default">The channel's default sender</label>
      </div>
    </>
  );
}

function SendersPage(
  props: { user: SessionUser; identities: Identity[]; domains: DomainRow[]; resend: boolean; error?: string },
) {
  const { user } = props;
  return (
    <Page title="Senders" user={user} active="senders">
      <h1>Senders</h1>
      {props.error && <p class="card alert" role="alert">{props.error}</p>}
      <section class="card" aria-labelledby="identities-title">
        <h2 id="identities-title">Sender identities</h2>
        {props.identities.length > 0
          ? <IdentityTable user={user} identities={props.identities} domains={props.domains} />
          : (
            <div class="empty">
              <p>
                <strong>No sender identities yet.</strong>
              </p>
              <p>
                Add one per channel below and make it the default: a send that names no identity uses it. An email
                sender also needs its domain verified (below).
              </p>
            </div>
          )}
        <h3>Add a sender</h3>
        <form method="post" action={`${BASE}/senders/identities`}>
          <CsrfField user={user} />
          <IdentityFields />
          <button type="submit">Add the sender</button>
        </form>
      </section>
      <DomainsSection user={user} domains={props.domains} resend={props.resend} />
    </Page>
  );
}

function EditPage(props: { user: SessionUser; identity: Identity; error?: string }) {
  const { user, identity } = props;
  return (
    <Page title="Edit a sender" user={user} active="senders">
      <p>
        <a href={`${BASE}/senders`}>All senders</a>
      </p>
      <h1>
        {identity.channel} sender <code>{identity.id}</code>
      </h1>
      {props.error && <p class="card alert" role="alert">{props.error}</p>}
      <section class="card" aria-label="Sender">
        <form method="post" action={identityPath(identity)}>
          <CsrfField user={user} />
          <IdentityFields identity={identity} />
          <p class="muted">{FROM_LABELS[identity.channel]}: what recipients see it come from.</p>
          <button type="submit">Save</button>
        </form>
      </section>
    </Page>
  );
}

/** A posted identity form as the admin API's identity body (its rules), or why it cannot be. */
function identityInput(channel: Channel, form: Record<string, unknown>) {
  const countries = field(form, "countries").split(/[\s,]+/).filter(Boolean);
  const parsed = IdentityBody.safeParse({
    from: field(form, "from"),
    name: field(form, "name").trim() || null,
    countries: countries.length > 0 ? countries : null,
    is_default: field(form, "is_default") === "on",
  });
  if (!parsed.success) {
    throw new ValidationError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  }
  if (channel === "email" && !isEmail(parsed.data.from)) {
    throw new ValidationError("An email sender's From must be an email address");
  }
  return parsed.data;
}

/**
 * The senders page: the team's sender identities per channel (list, add, edit, delete) and its email
 * domains with their verification. Every member of the team may manage both.
 */
export function sendersRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  const load = async (user: SessionUser, channel: string | undefined, id: string | undefined) =>
    channel && id && isChannel(channel) ? await findIdentity(deps.sql, user.teamId, channel, { id }) : undefined;
  const notFound = (user: SessionUser) => (
    <MessagePage title="Sender not found" message="This team has no sender identity of that id." user={user} />
  );

  app.get("/senders", async (c) => {
    const user = c.get("user");
    const [identities, domains] = await Promise.all([
      listIdentities(deps.sql, user.teamId),
      listTeamDomains(deps.sql, user.teamId),
    ]);
    return c.html(
      <SendersPage user={user} identities={identities} domains={domains} resend={verifiesWithResend(deps)} />,
    );
  });

  app.post("/senders/identities", async (c) => {
    const user = c.get("user");
    const form = await c.req.parseBody();
    const channel = field(form, "channel");
    const id = RecordKey.min(1).safeParse(field(form, "id").trim());
    if (!isChannel(channel) || !id.success) throw new ValidationError("Choose a channel and give the sender an id");
    const input = identityInput(channel, form);
    if (await findIdentity(deps.sql, user.teamId, channel, { id: id.data })) {
      throw new ConflictError(`The team has a ${channel} sender ${id.data} already: edit it instead`);
    }
    await upsertIdentity(deps.sql, user.teamId, channel, id.data, input);
    return c.redirect(`${BASE}/senders`, 303);
  });

  app.get("/senders/identities/:channel/:id", async (c) => {
    const user = c.get("user");
    const identity = await load(user, c.req.param("channel"), c.req.param("id"));
    if (!identity) return c.html(notFound(user), 404);
    return c.html(<EditPage user={user} identity={identity} />);
  });

  app.post("/senders/identities/:channel/:id", async (c) => {
    const user = c.get("user");
    const identity = await load(user, c.req.param("channel"), c.req.param("id"));
    if (!identity) return c.html(notFound(user), 404);
    let input;
    try {
      input = identityInput(identity.channel, await c.req.parseBody());
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return c.html(<EditPage user={user} identity={identity} error={err.message} />, 400);
    }
    await upsertIdentity(deps.sql, user.teamId, identity.channel, identity.id, input);
    return c.redirect(`${BASE}/senders`, 303);
  });

  app.post("/senders/identities/:channel/:id/delete", async (c) => {
    const user = c.get("user");
    const identity = await load(user, c.req.param("channel"), c.req.param("id"));
    if (!identity) return c.html(notFound(user), 404);
    await deleteIdentity(deps.sql, user.teamId, identity.channel, identity.id);
    return c.redirect(`${BASE}/senders`, 303);
  });

  app.route("/", domainRoutes(deps));
  return app;
}

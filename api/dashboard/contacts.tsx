import { Hono } from "hono";
import { type ContactFilters, type ContactListRow, listContacts } from "../../shared/contacts/list.ts";
import { listDeviceTokens } from "../../shared/contacts/device_tokens.ts";
import { CATEGORIES, CHANNELS, type PreferenceChange, updatePreferences } from "../../shared/contacts/preferences.ts";
import { findContact, isUuid } from "../../shared/contacts/queries.ts";
import type { Deps } from "../../shared/deps.ts";
import { ContactPage, fullName, preferenceField } from "./contact_page.tsx";
import type { DashboardEnv } from "./env.ts";
import { ImportCard } from "./imports.tsx";
import { recentImports } from "./contact_import.ts";
import type { ContactImport } from "./contact_import.ts";
import { BASE, MessagePage, Page, When } from "./layout.tsx";
import { type KeysetPage, listMessages } from "./message_queries.ts";
import { Pager } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";
import { Table } from "./table.tsx";

/** Contacts a page of the list shows. */
export const CONTACTS_PER_PAGE = 50;
/** Messages a page of a contact's history shows. */
export const HISTORY_PER_PAGE = 25;

/** The list's query string as the form sends it. */
interface ListQuery {
  q?: string;
  tag?: string;
  active?: string;
  unsubscribed?: string;
  after?: string;
}

/**
 * How a search is matched: a whole email address exactly (contacts_team_email), a phone number on
 * its digits (contacts_team_phone_digits), anything else as a part of a name, email or external id
 * (which reads every contact of the team).
 */
function filtersOf(q: ListQuery): ContactFilters {
  const text = q.q?.trim() ?? "";
  const phone = /^\+?[\d\s().-]{6,}$/.test(text) ? text.replace(/\D/g, "") : "";
  const email = /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text) ? text : "";
  const yesNo = (v?: string) => v === "yes" ? true : v === "no" ? false : undefined;
  return {
    search: text && !phone && !email ? text : undefined,
    email: email || undefined,
    phoneDigits: phone || undefined,
    tags: q.tag?.trim() ? [q.tag.trim()] : undefined,
    isActive: yesNo(q.active),
    isUnsubscribed: yesNo(q.unsubscribed),
  };
}

function YesNoSelect(props: { id: string; label: string; value?: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.id}>
        <option value="">Any</option>
        <option value="yes" selected={props.value === "yes"}>Yes</option>
        <option value="no" selected={props.value === "no"}>No</option>
      </select>
    </div>
  );
}

function ContactFiltersForm(props: { query: ListQuery }) {
  const { query } = props;
  return (
    <form method="get" action={`${BASE}/contacts`} class="row" role="search">
      <div class="field grow">
        <label for="q">Search</label>
        <input id="q" name="q" type="search" value={query.q ?? ""} placeholder="Email, phone, name or external id" />
      </div>
      <div class="field">
        <label for="tag">Tag</label>
        <input id="tag" name="tag" value={query.tag ?? ""} />
      </div>
      <YesNoSelect id="active" label="Active" value={query.active} />
      <YesNoSelect id="unsubscribed" label="Unsubscribed" value={query.unsubscribed} />
      <button type="submit">Search</button>
    </form>
  );
}

function ContactTable(props: { contacts: ContactListRow[] }) {
  return (
    <Table headings={["Email", "Name", "External id", "Tags", "Active", "Created"]}>
      {props.contacts.map((c) => (
        <tr key={c.id}>
          <td data-label="Email">
            <a href={`${BASE}/contacts/${c.id}`}>{c.email}</a>
          </td>
          <td data-label="Name">{fullName(c)}</td>
          <td data-label="External id">
            <code>{c.external_id}</code>
          </td>
          <td data-label="Tags">{c.tags.join(", ")}</td>
          <td data-label="Active">{c.is_active ? "yes" : "no"}</td>
          <td data-label="Created">
            <When at={c.created_at} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

function ContactsPage(
  props: { user: SessionUser; query: ListQuery; page: KeysetPage<ContactListRow>; imports: ContactImport[] },
) {
  const { user, query, page } = props;
  const filtered = Boolean(query.q || query.tag || query.active || query.unsubscribed);
  return (
    <Page title="Contacts" user={user} active="contacts">
      <h1>Contacts</h1>
      <section class="card" aria-labelledby="list-title">
        <h2 id="list-title">Find a contact</h2>
        <ContactFiltersForm query={query} />
        {page.rows.length > 0 ? <ContactTable contacts={page.rows} /> : filtered || query.after
          ? (
            <p class="empty">
              No contact matches these filters. <a href={`${BASE}/contacts`}>Clear the filters</a>.
            </p>
          )
          : (
            <div class="empty">
              <p>
                <strong>No contacts yet.</strong>
              </p>
              <p>
                Import a CSV file below, or create them with <code>POST /api/v1/contacts</code> (one at a time) or{" "}
                <code>POST /api/v1/contacts/bulk</code> (up to 1,000 a call).
              </p>
            </div>
          )}
        <Pager path={`${BASE}/contacts`} query={{ ...query, after: undefined }} after={query.after} next={page.next} />
      </section>
      <ImportCard user={user} imports={props.imports} />
    </Page>
  );
}

function notFound(user: SessionUser) {
  const message = "Your team has no contact with this id: it may have been deleted.";
  return <MessagePage title="Contact not found" message={message} user={user} />;
}

/** The contacts pages: search and filters, a contact's page, and its preference form. */
export function contactsRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  app.get("/contacts", async (c) => {
    const user = c.get("user");
    const query: ListQuery = c.req.query();
    const after = query.after && isUuid(query.after) ? query.after : undefined;
    const [list, imports] = await Promise.all([
      listContacts(deps.sql, user.teamId, {
        limit: CONTACTS_PER_PAGE,
        startingAfter: after,
        filters: filtersOf(query),
      }),
      recentImports(deps.sql, user.teamId),
    ]);
    const page = { rows: list.data, next: list.next_cursor };
    return c.html(<ContactsPage user={user} query={{ ...query, after }} page={page} imports={imports} />);
  });

  app.get("/contacts/:id", async (c) => {
    const user = c.get("user");
    const id = c.req.param("id");
    const contact = isUuid(id) ? await findContact(deps.sql, user.teamId, { by: "id", value: id }) : undefined;
    if (!contact || contact.id !== id) return c.html(notFound(user), 404);
    const after = c.req.query("after") || undefined;
    const [devices, history] = await Promise.all([
      listDeviceTokens(deps.sql, user.teamId, contact.id),
      listMessages(deps.sql, user.teamId, { limit: HISTORY_PER_PAGE, after, filters: { contactId: contact.id } }),
    ]);
    const saved = c.req.query("saved") === "1";
    return c.html(
      <ContactPage user={user} contact={contact} devices={devices} history={history} after={after} saved={saved} />,
    );
  });

  app.post("/contacts/:id/preferences", async (c) => {
    const user = c.get("user");
    const id = c.req.param("id");
    const form = await c.req.parseBody();
    // Every pair is in the form: an unticked box is absent, so it means "unsubscribed".
    const changes: PreferenceChange[] = CHANNELS.flatMap((channel) =>
      CATEGORIES.map((category) => ({
        channel,
        category,
        subscribed: form[preferenceField(channel, category)] === "on",
      }))
    );
    const updated = isUuid(id)
      ? await updatePreferences(deps.sql, user.teamId, { by: "id", value: id }, changes)
      : undefined;
    if (!updated || updated.id !== id) return c.html(notFound(user), 404);
    return c.redirect(`${BASE}/contacts/${id}?saved=1`, 303);
  });

  return app;
}

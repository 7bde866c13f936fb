import type { DeviceTokenRow } from "../../shared/contacts/device_tokens.ts";
import { CATEGORIES, CHANNELS } from "../../shared/contacts/preferences.ts";
import type { ContactRow } from "../../shared/contacts/queries.ts";
import { Fact, Facts } from "./facts.tsx";
import { BASE, CsrfField, Page, When } from "./layout.tsx";
import type { KeysetPage, MessageListRow } from "./message_queries.ts";
import { MessageTable } from "./messages.tsx";
import { Pager } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";
import { Table } from "./table.tsx";

/** A contact's first and last names, as one ("" when it has neither). */
export function fullName(c: { first_name: string | null; last_name: string | null }): string {
  return [c.first_name, c.last_name].filter(Boolean).join(" ");
}

function Details(props: { contact: ContactRow }) {
  const c = props.contact;
  const phone = typeof c.custom_fields.phone === "string" ? c.custom_fields.phone : undefined;
  return (
    <Facts>
      <Fact term="Email">{c.email}</Fact>
      <Fact term="Name">{fullName(c)}</Fact>
      <Fact term="Phone">{phone}</Fact>
      <Fact term="External id">{c.external_id}</Fact>
      <Fact term="Active">{c.is_active ? "yes" : "no"}</Fact>
      <Fact term="Unsubscribed">{c.is_unsubscribed ? "yes" : "no"}</Fact>
      <Fact term="Tags">{c.tags.join(", ")}</Fact>
    </Facts>
  );
}

function CustomFields(props: { fields: Record<string, unknown> }) {
  const entries = Object.entries(props.fields).filter(([key]) => key !== "phone");
  if (entries.length === 0) return <p class="empty">No custom fields. They come from the API or extra CSV columns.</p>;
  return (
    <Facts>
      {entries.map(([key, value]) => (
        <Fact key={key} term={key}>
          <code>{typeof value === "string" ? value : JSON.stringify(value)}</code>
        </Fact>
      ))}
    </Facts>
  );
}

/** The preference field of a (channel, category) pair: `email.promotional`. */
export function preferenceField(channel: string, category: string): string {
  return `${channel}.${category}`;
}

function PreferencesForm(props: { user: SessionUser; contact: ContactRow }) {
  const { contact } = props;
  return (
    <form method="post" action={`${BASE}/contacts/${contact.id}/preferences`}>
      <CsrfField user={props.user} />
      <Table caption={`Preferences of ${contact.email}`} headings={["Channel", ...CATEGORIES]}>
        {CHANNELS.map((channel) => (
          <tr key={channel}>
            <th scope="row">{channel}</th>
            {CATEGORIES.map((category) => (
              <td key={category} data-label={category}>
                <input
                  type="checkbox"
                  id={preferenceField(channel, category)}
                  name={preferenceField(channel, category)}
                  checked={contact.preferences[channel]?.[category] === true}
                  aria-label={`${channel} ${category}`}
                />
              </td>
            ))}
          </tr>
        ))}
      </Table>
      <button type="submit">Save preferences</button>
    </form>
  );
}

function Devices(props: { devices: DeviceTokenRow[] }) {
  if (props.devices.length === 0) {
    return <p class="empty">No device tokens. Apps register them with the contact's device-token endpoint.</p>;
  }
  return (
    <Table headings={["Token", "Platform", "Service", "Device", "Registered"]}>
      {props.devices.map((d) => (
        <tr key={d.id}>
          <td data-label="Token">
            <code>{d.token.length > 16 ? `${d.token.slice(0, 16)}…` : d.token}</code>
          </td>
          <td data-label="Platform">{d.platform}</td>
          <td data-label="Service">{d.provider}</td>
          <td data-label="Device">{[d.device_model, d.os_version, d.app_version].filter(Boolean).join(" · ")}</td>
          <td data-label="Registered">
            <When at={d.created_at} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** A contact's page: details, preferences (a form), device tokens, custom fields and its messages. */
export function ContactPage(
  props: {
    user: SessionUser;
    contact: ContactRow;
    devices: DeviceTokenRow[];
    history: KeysetPage<MessageListRow>;
    after?: string;
    saved: boolean;
  },
) {
  const { user, contact, history } = props;
  return (
    <Page title={contact.email} user={user} active="contacts">
      <p>
        <a href={`${BASE}/contacts`}>← Contacts</a>
      </p>
      <h1>{contact.email}</h1>
      {props.saved && <p class="card notice" role="status">Preferences saved.</p>}
      <section class="card" aria-labelledby="details-title">
        <h2 id="details-title">Details</h2>
        <Details contact={contact} />
      </section>
      <section class="card" aria-labelledby="preferences-title">
        <h2 id="preferences-title">Preferences</h2>
        <p class="muted">What this contact agreed to receive. A send skips a channel and category left unticked.</p>
        <PreferencesForm user={user} contact={contact} />
      </section>
      <section class="card" aria-labelledby="devices-title">
        <h2 id="devices-title">Device tokens</h2>
        <Devices devices={props.devices} />
      </section>
      <section class="card" aria-labelledby="fields-title">
        <h2 id="fields-title">Custom fields</h2>
        <CustomFields fields={contact.custom_fields} />
      </section>
      <section class="card" aria-labelledby="history-title">
        <h2 id="history-title">Messages</h2>
        {history.rows.length > 0
          ? <MessageTable messages={history.rows} />
          : <p class="empty">No message has been sent to this contact yet.</p>}
        <Pager path={`${BASE}/contacts/${contact.id}`} query={{}} after={props.after} next={history.next} />
      </section>
    </Page>
  );
}

import type { Channel } from "../../shared/providers/types.ts";
import type { Template } from "../../shared/templates.ts";
import { BASE, Page, When } from "./layout.tsx";
import { Table } from "./table.tsx";
import type { SessionUser } from "./sessions.ts";
import { CHANNELS } from "./template_form.ts";
import { otpKeyOf } from "./template_preview.tsx";

/** How each channel is named on the pages. */
export const CHANNEL_NAMES: Record<Channel, string> = {
  email: "Email",
  sms: "SMS",
  whatsapp: "WhatsApp",
  push: "Push",
};

/** Where a channel's template list is. */
export function listPath(channel: Channel): string {
  return `${BASE}/templates/${channel}`;
}

/** Where a template's editor is (`new` for one not yet saved). */
export function editorPath(channel: Channel, id: string | undefined): string {
  return `${listPath(channel)}/${id ? encodeURIComponent(id) : "new"}`;
}
function ChannelTabs(props: { active: Channel }) {
  return (
    <nav class="tabs" aria-label="Channels">
      <ul>
        {CHANNELS.map((channel) => (
          <li key={channel}>
            <a href={listPath(channel)} aria-current={channel === props.active ? "page" : undefined}>
              {CHANNEL_NAMES[channel]}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** What the reserved OTP key of a channel does, where it applies (nothing for push). */
export function OtpNote(props: { channel: Channel; exists?: boolean }) {
  const key = otpKeyOf(props.channel);
  if (!key) return null;
  const numbered = props.channel === "whatsapp";
  return (
    <section class="card note" aria-labelledby="otp-title" id="otp-note">
      <h2 id="otp-title">The reserved OTP key</h2>
      <p>
        Verification codes sent by <code>POST /api/v1/otp/send</code> use the built-in text unless this team has an{" "}
        {CHANNEL_NAMES[props.channel]} template under the key <code>{key}</code>{" "}
        (exactly so: keys are case-sensitive). It is used when it is approved, names <code>{"{{otp_code}}"}</code> and
        {" "}
        <code>{"{{expiry_minutes}}"}</code>
        {numbered && (
          <>
            {" "}(or <code>{"{{1}}"}</code> for the code and <code>{"{{2}}"}</code> for the expiry)
          </>
        )}
        {props.channel === "sms" && ", and a sender identity serves the recipient's country"}; otherwise the built-in
        text goes out, silently. <code>{"{{first_name}}"}</code> and <code>{"{{last_name}}"}</code> are optional.
      </p>
      {props.exists === false && (
        <p>
          <a href={`${editorPath(props.channel, undefined)}?key=${encodeURIComponent(key)}`}>
            Write your own {CHANNEL_NAMES[props.channel]} OTP text
          </a>
        </p>
      )}
    </section>
  );
}

function TemplateTable(props: { channel: Channel; templates: Template[] }) {
  const whatsapp = props.channel === "whatsapp";
  return (
    <Table
      caption={`${CHANNEL_NAMES[props.channel]} templates`}
      headings={whatsapp ? ["Key", "Category", "Status", "Updated"] : ["Key", "Status", "Updated"]}
    >
      {props.templates.map((t) => (
        <tr key={t.id}>
          <td data-label="Key">
            <a href={editorPath(props.channel, t.id)}>
              <code>{t.key}</code>
            </a>
            {t.key === otpKeyOf(props.channel) && <span class="tag">OTP</span>}
          </td>
          {whatsapp && <td data-label="Category">{t.category ?? "—"}</td>}
          <td data-label="Status">
            <span class={`status ${t.status}`}>{t.status}</span>
          </td>
          <td data-label="Updated">
            <When at={t.updated_at} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** What the API call of a channel's send is, for the empty state. */
const SEND_PATH: Record<Channel, string> = {
  email: "POST /api/v1/messages/send",
  sms: "POST /api/v1/sms/send",
  whatsapp: "POST /api/v1/whatsapp/send",
  push: "POST /api/v1/push/send",
};

/** A channel's templates: a table, or an empty state that says what to do first. */
export function TemplateListPage(props: { user: SessionUser; channel: Channel; templates: Template[] }) {
  const { channel, templates } = props;
  const name = CHANNEL_NAMES[channel];
  const otpKey = otpKeyOf(channel);
  return (
    <Page title={`${name} templates`} user={props.user} active="templates">
      <h1>Templates</h1>
      <ChannelTabs active={channel} />
      <section class="card" aria-labelledby="list-title">
        <div class="heading-row">
          <h2 id="list-title">{name} templates</h2>
          <a class="button" href={editorPath(channel, undefined)}>New {name} template</a>
        </div>
        {templates.length > 0 ? <TemplateTable channel={channel} templates={templates} /> : (
          <div class="empty">
            <p>
              <strong>No {name} templates yet — create one with “New {name} template”.</strong>
            </p>
            <p>
              Give it a key, write the text with <code>{"{{variables}}"}</code>, watch the preview, then name the key as
              {" "}
              <code>template_key</code> in <code>{SEND_PATH[channel]}</code>.
            </p>
          </div>
        )}
      </section>
      <OtpNote channel={channel} exists={otpKey ? templates.some((t) => t.key === otpKey) : undefined} />
    </Page>
  );
}

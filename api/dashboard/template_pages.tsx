import type { Channel } from "../../shared/providers/types.ts";
import type { Template } from "../../shared/templates.ts";
import { PREVIEW_SCRIPT_PATH } from "./assets.ts";
import { BASE, CsrfField, Page, When } from "./layout.tsx";
import type { SessionUser } from "./sessions.ts";
import { CATEGORIES, CHANNELS, type Draft, type Sample, STATUSES } from "./template_form.ts";
import { otpKeyOf, type Preview, PreviewPanel } from "./template_preview.tsx";
import type { TestSendResult } from "./template_test_send.ts";

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

/** What a sample address is, by channel. */
const ADDRESS: Record<Channel, { label: string; type: string; hint: string }> = {
  email: { label: "Email address", type: "email", hint: "Fills {{contact_email}} too." },
  sms: { label: "Phone number", type: "tel", hint: "E.164 (+4915…): its country picks the variation." },
  whatsapp: { label: "WhatsApp number", type: "tel", hint: "E.164 (+4915…)." },
  push: { label: "Device token", type: "text", hint: "A registered device's token, for the test." },
};

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
    <div class="table-wrap">
      <table>
        <caption class="skip">{CHANNEL_NAMES[props.channel]} templates</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            {whatsapp && <th scope="col">Category</th>}
            <th scope="col">Status</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
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
        </tbody>
      </table>
    </div>
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

function TextField(
  props: { name: string; label: string; value: string; hint?: string; rows?: number; required?: boolean },
) {
  const id = `field-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.hint && <p class="hint" id={`${id}-hint`}>{props.hint}</p>}
      {props.rows
        ? (
          <textarea
            id={id}
            name={props.name}
            rows={props.rows}
            required={props.required}
            aria-describedby={props.hint ? `${id}-hint` : undefined}
          >
            {props.value}
          </textarea>
        )
        : (
          <input
            id={id}
            name={props.name}
            value={props.value}
            required={props.required}
            aria-describedby={props.hint ? `${id}-hint` : undefined}
          />
        )}
    </div>
  );
}

function Variations(props: { rows: [string, string][] }) {
  // One blank row more than the draft has: without script, another appears after each save or preview.
  const rows = [...props.rows, ["", ""] as [string, string]];
  return (
    <fieldset>
      <legend>Country variations</legend>
      <p class="hint">
        With any variation, only the countries listed are served (a number of another country fails); without any, the
        text above serves every country.
      </p>
      {rows.map(([country, text], i) => (
        <div class="variation" key={i}>
          <div class="field country">
            <label for={`variation_country_${i}`}>Country</label>
            <input
              id={`variation_country_${i}`}
              name={`variation_country_${i}`}
              value={country}
              maxlength={2}
              placeholder="DE"
              autocomplete="off"
            />
          </div>
          <div class="field">
            <label for={`variation_body_${i}`}>Text for that country</label>
            <textarea id={`variation_body_${i}`} name={`variation_body_${i}`} rows={2}>{text}</textarea>
          </div>
        </div>
      ))}
    </fieldset>
  );
}

function ChannelFields(props: { channel: Channel; draft: Draft }) {
  const { channel, draft } = props;
  switch (channel) {
    case "email":
      return (
        <>
          <TextField name="subject" label="Subject" value={draft.subject} required />
          <TextField name="html" label="HTML body" value={draft.html} rows={8} required />
          <TextField
            name="text"
            label="Plain-text body (optional)"
            value={draft.text}
            rows={4}
            hint="For mail readers that show no HTML."
          />
        </>
      );
    case "sms":
      return (
        <>
          <TextField
            name="body"
            label="Text"
            value={draft.body}
            rows={4}
            required
            hint="160 GSM-7 characters make one segment (153 each when split); any other character (an emoji, ç…) makes it UCS-2: 70 (67)."
          />
          <Variations rows={draft.variations} />
        </>
      );
    case "whatsapp":
      return (
        <>
          <TextField
            name="body"
            label="Text"
            value={draft.body}
            rows={5}
            required
            hint="Numbered placeholders {{1}}, {{2}} are filled from the variables 1, 2."
          />
          <div class="field">
            <label for="field-category">Category</label>
            <p class="hint" id="field-category-hint">
              Sends must name the same conversation_category; each category has its own price per conversation.
            </p>
            <select id="field-category" name="category" aria-describedby="field-category-hint">
              <option value="" selected={draft.category === ""}>Choose…</option>
              {CATEGORIES.map((c) => <option key={c} value={c} selected={draft.category === c}>{c}</option>)}
            </select>
          </div>
        </>
      );
    case "push":
      return (
        <>
          <TextField name="title" label="Title" value={draft.title} required />
          <TextField name="body" label="Body" value={draft.body} rows={3} required />
        </>
      );
  }
}

const STATUS_WORDS: Record<string, string> = {
  approved: "Approved (can be sent)",
  pending: "Pending approval (cannot be sent yet)",
  rejected: "Rejected (cannot be sent)",
};

/** Everything the editor page shows. */
export interface EditorProps {
  user: SessionUser;
  channel: Channel;
  /** The stored template, when editing one. */
  stored?: Template;
  draft: Draft;
  sample: Sample;
  preview: Preview;
  /** The template the preview rendered (the draft's). */
  previewed: Template;
  errors?: string[];
  saved?: boolean;
  test?: TestSendResult;
}

function TestResult(props: { result: TestSendResult }) {
  const { result } = props;
  if (!result.ok) {
    return <p class="card alert" role="alert" id="test-result">The test was not sent: {result.error}.</p>;
  }
  return (
    <div class="card notice" role="status" id="test-result">
      <p>
        <strong>Test accepted</strong>{" "}
        under your test key: it is recorded in the outbox, not delivered, and never charged.
      </p>
      <dl class="facts">
        <dt>Trigger id</dt>
        <dd>
          <code id="test-trigger-id">{result.triggerId}</code>
        </dd>
        {result.executionId && (
          <>
            <dt>Execution id</dt>
            <dd>
              <code>{result.executionId}</code>
            </dd>
          </>
        )}
      </dl>
      <p class="muted">
        Its status: <code>GET /api/v1/triggers/{result.triggerId}</code> with the test key.
      </p>
      {result.warnings.map((w) => <p class="warning" key={w}>{w}</p>)}
    </div>
  );
}

/** The editor: the template's fields, a sample, the live preview, and (once saved) a test send and delete. */
export function EditorPage(props: EditorProps) {
  const { channel, stored, draft, sample, user } = props;
  const name = CHANNEL_NAMES[channel];
  const base = editorPath(channel, stored?.id);
  const address = ADDRESS[channel];
  const title = stored ? `${name} template ${stored.key}` : `New ${name} template`;
  return (
    <Page title={title} user={user} active="templates" script={PREVIEW_SCRIPT_PATH}>
      <p>
        <a href={listPath(channel)}>All {name} templates</a>
      </p>
      <h1>
        {stored
          ? (
            <>
              {name} template <code>{stored.key}</code>
            </>
          )
          : title}
      </h1>
      {props.errors && props.errors.length > 0 && (
        <div class="card alert" role="alert" id="form-errors">
          <p>
            <strong>The template was not saved:</strong>
          </p>
          <ul>
            {props.errors.map((e) => <li key={e}>{e}</li>)}
          </ul>
        </div>
      )}
      {props.saved && <p class="card notice" role="status" id="saved">Saved. Sends use this version from now on.</p>}
      <form method="post" action={base} id="template-form" data-preview={`${base}/preview`}>
        <CsrfField user={user} />
        <div class="editor">
          <section class="card" aria-labelledby="fields-title">
            <h2 id="fields-title">Template</h2>
            {stored
              ? (
                <div class="field">
                  <label for="field-key">Key</label>
                  <p class="hint" id="field-key-hint">Sends name the template by its key, so it stays as it is.</p>
                  <input id="field-key" name="key" value={stored.key} readonly aria-describedby="field-key-hint" />
                </div>
              )
              : (
                <TextField
                  name="key"
                  label="Key"
                  value={draft.key}
                  required
                  hint="What sends name as template_key, such as order-shipped."
                />
              )}
            <ChannelFields channel={channel} draft={draft} />
            <div class="field">
              <label for="field-status">Approval status</label>
              <select id="field-status" name="status">
                {STATUSES.map((s) => <option key={s} value={s} selected={draft.status === s}>{STATUS_WORDS[s]}
                </option>)}
              </select>
            </div>
            <fieldset>
              <legend>Sample for the preview{stored ? " and the test" : ""}</legend>
              <div class="field">
                <label for="sample_to">{address.label}</label>
                <p class="hint" id="sample_to-hint">{address.hint}</p>
                <input
                  id="sample_to"
                  name="sample_to"
                  type={address.type}
                  value={sample.to}
                  autocomplete="off"
                  aria-describedby="sample_to-hint"
                />
              </div>
              <div class="row">
                <div class="field">
                  <label for="sample_first_name">First name</label>
                  <input id="sample_first_name" name="sample_first_name" value={sample.firstName} autocomplete="off" />
                </div>
                <div class="field">
                  <label for="sample_last_name">Last name</label>
                  <input id="sample_last_name" name="sample_last_name" value={sample.lastName} autocomplete="off" />
                </div>
              </div>
              <div class="field">
                <label for="sample_variables">Variables</label>
                <p class="hint" id="sample_variables-hint">
                  One <code>name=value</code> a line, as a send's <code>variables</code>. A contact fills{" "}
                  <code>{"{{contact_first_name}}"}</code> and the like from the names and address above.
                </p>
                <textarea
                  id="sample_variables"
                  name="sample_variables"
                  rows={4}
                  aria-describedby="sample_variables-hint"
                >
                  {sample.variablesText}
                </textarea>
              </div>
            </fieldset>
            <div class="actions">
              <button type="submit">{stored ? "Save" : "Create template"}</button>
              <button type="submit" class="quiet" formaction={`${base}/preview`} id="preview-button">Preview</button>
            </div>
          </section>
          <section class="card preview" aria-labelledby="preview-title">
            <h2 id="preview-title">Preview</h2>
            <p class="hint">Rendered by the code that sends, with the sample.</p>
            <div id="preview" aria-live="polite">
              <PreviewPanel preview={props.preview} template={props.previewed} />
            </div>
          </section>
        </div>
        {stored && (
          <section class="card" aria-labelledby="test-title">
            <h2 id="test-title">Send a test</h2>
            <p>
              Sends the <strong>saved</strong>{" "}
              template to the sample address above with the sample variables, through your team's test key: it goes to
              the outbox, is never delivered nor charged.
            </p>
            <button type="submit" formaction={`${base}/test`} id="test-button">Send a test</button>
            {props.test && <TestResult result={props.test} />}
          </section>
        )}
      </form>
      {stored && (
        <section class="card" aria-labelledby="delete-title">
          <h2 id="delete-title">Delete</h2>
          <p>Sends that name this key fail once it is gone.</p>
          <form method="post" action={`${base}/delete`}>
            <CsrfField user={user} />
            <button type="submit" class="danger">Delete {stored.key}</button>
          </form>
        </section>
      )}
      {otpKeyOf(channel) === (stored?.key ?? draft.key) && <OtpNote channel={channel} />}
    </Page>
  );
}

import type { Channel } from "../../shared/providers/types.ts";
import type { Template } from "../../shared/templates.ts";
import { PREVIEW_SCRIPT_PATH } from "./assets.ts";
import { CsrfField, Page } from "./layout.tsx";
import type { SessionUser } from "./sessions.ts";
import { type Draft, type Sample, STATUSES } from "./template_form.ts";
import { ChannelFields, TextField } from "./template_fields.tsx";
import { CHANNEL_NAMES, editorPath, listPath, OtpNote } from "./template_list.tsx";
import { otpKeyOf, type Preview, PreviewPanel } from "./template_preview.tsx";
import type { TestSendResult } from "./template_test_send.ts";

/** What a sample address is, by channel. */
const ADDRESS: Record<Channel, { label: string; type: string; hint: string }> = {
  email: { label: "Email address", type: "email", hint: "Fills {{contact_email}} too." },
  sms: {
    label: "Phone number",
    type: "tel",
    hint: "E.164 (+4915…): fills {{contact_phone}}; its country picks the variation.",
  },
  whatsapp: { label: "WhatsApp number", type: "tel", hint: "E.164 (+4915…): fills {{contact_phone}}." },
  push: { label: "Device token", type: "text", hint: "A registered device's token, for the test." },
};

const STATUS_WORDS: Record<string, string> = {
  approved: "Approved",
  pending: "Pending approval",
  rejected: "Rejected",
};

/** What the approval status does on a channel: only SMS and WhatsApp sends look at it. */
function statusHint(channel: Channel): string {
  return channel === "sms" || channel === "whatsapp"
    ? "Sends refuse a template that is not approved."
    : `${CHANNEL_NAMES[channel]} sends do not look at it.`;
}

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
    <Page title={title} user={user} active="templates" scripts={[PREVIEW_SCRIPT_PATH]}>
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
              <p class="hint" id="field-status-hint">{statusHint(channel)}</p>
              <select id="field-status" name="status" aria-describedby="field-status-hint">
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

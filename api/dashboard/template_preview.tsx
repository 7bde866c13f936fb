import type { Config } from "../../shared/config.ts";
import { toUsd } from "../../shared/money.ts";
import { countryOfE164 } from "../../shared/phone.ts";
import type { Channel } from "../../shared/providers/types.ts";
import { type SmsSegmentation, smsSegments } from "../../shared/sms_segments.ts";
import { messageCost, whatsappPrice } from "../../shared/sending/pricing.ts";
import { renderContent, type RenderedContent } from "../../shared/sending/render.ts";
import type { Content } from "../../shared/sending/spec.ts";
import type { Template } from "../../shared/templates.ts";
import { OTP_TEMPLATE_KEYS, usableForOtp } from "../../otp/templates.ts";
import { parseVariables, type Sample } from "./template_form.ts";

/** The reserved OTP key of a channel, if the channel has one. */
export function otpKeyOf(channel: Channel): string | undefined {
  return channel === "push" ? undefined : OTP_TEMPLATE_KEYS[channel];
}

/** What the preview of a draft shows: the message as the send path renders it, and its price. */
export interface Preview {
  channel: Channel;
  rendered: RenderedContent;
  /** The country of the sample number, which picks an SMS variation. */
  country?: string;
  /** The SMS's segments, as billed. */
  sms?: SmsSegmentation;
  /** What one message costs, in micro-dollars (WhatsApp: a conversation of the category); undefined when unknown. */
  priceMicros?: number;
  /** A template under the reserved OTP key that OTP sends would not use (they fall back to the built-in text). */
  otpFallback?: boolean;
}

/** The content a send of `template` names: the same shape the send routes build. */
function contentOf(template: Template): Content {
  switch (template.channel) {
    case "email":
      return { channel: "email", template_key: template.key, category: "transactional" };
    case "sms":
      return { channel: "sms", template_key: template.key, category: "transactional" };
    case "whatsapp":
      return {
        channel: "whatsapp",
        template_key: template.key,
        conversation_category: template.category ?? "UTILITY",
      };
    case "push":
      return { channel: "push", template: template.key, category: "transactional" };
  }
}

/**
 * Renders `template` for the sample recipient with the code that renders a send (variables, contact
 * variables, WhatsApp `{{1}}`, the SMS variation of the number's country), and prices it with the
 * pricing the send path charges.
 */
export function previewTemplate(config: Config, template: Template, sample: Sample): Preview {
  const { channel } = template;
  const phone = channel === "sms" || channel === "whatsapp";
  const country = phone ? countryOfE164(sample.to) : undefined;
  const info = {
    first_name: sample.firstName || null,
    last_name: sample.lastName || null,
    // A push sample's address is a device token, not the contact's email.
    email: channel === "email" ? sample.to || null : null,
    phone: phone ? sample.to || null : null,
  };
  const content = contentOf(template);
  const rendered = renderContent(content, template, parseVariables(sample.variablesText), info, country);
  const text = rendered.ok ? rendered.text ?? "" : "";
  const preview: Preview = { channel, rendered, country };
  if (channel === "sms") {
    preview.sms = smsSegments(text);
    preview.priceMicros = messageCost(config, content, text);
  } else if (channel === "whatsapp") {
    preview.priceMicros = template.category ? whatsappPrice(config, template.category) : undefined;
  } else {
    preview.priceMicros = messageCost(config, content, text);
  }
  if (channel !== "push" && template.key === otpKeyOf(channel)) {
    preview.otpFallback = !usableForOtp(template, country);
  }
  return preview;
}

/** Micro-dollars as US dollars, to the last non-zero digit. */
export function usd(micros: number): string {
  return toUsd(micros).toLocaleString("en-US", {
    style: "currency",
    currency: "USD",
    minimumFractionDigits: 2,
    maximumFractionDigits: 6,
  });
}

function Missing(props: { names: string[] }) {
  const names = [...new Set(props.names)];
  if (names.length === 0) return null;
  return (
    <p class="warning" id="preview-missing">
      No value for {names.map((n, i) => (
        <>
          {i > 0 && ", "}
          <code>{`{{${n}}}`}</code>
        </>
      ))}: {names.length === 1 ? "it renders" : "they render"} empty. Add it to the sample variables, or to the send.
    </p>
  );
}

function Message(props: { preview: Preview }) {
  const { rendered, channel } = props.preview;
  if (!rendered.ok) return <p class="card alert" id="preview-error">{rendered.error}</p>;
  switch (channel) {
    case "email":
      return (
        <div class="email-preview">
          <p>
            <strong>Subject:</strong> <span id="preview-subject">{rendered.subject}</span>
          </p>
          {rendered.html
            ? <iframe sandbox="" srcdoc={rendered.html} title="The email's HTML, as sent" id="preview-html"></iframe>
            : <p class="muted">No HTML body.</p>}
          {rendered.text && (
            <details>
              <summary>Plain-text version</summary>
              <pre id="preview-text">{rendered.text}</pre>
            </details>
          )}
        </div>
      );
    case "sms":
      return <pre class="bubble" id="preview-text">{rendered.text}</pre>;
    case "whatsapp":
      return <pre class="bubble whatsapp" id="preview-text">{rendered.text}</pre>;
    case "push":
      return (
        <div class="notification" role="img" aria-label="The notification as a phone shows it">
          <strong id="preview-title">{rendered.title}</strong>
          <span id="preview-text">{rendered.text}</span>
        </div>
      );
  }
}

function Facts(props: { preview: Preview; template: Template }) {
  const { preview, template } = props;
  return (
    <dl class="facts">
      {preview.sms && (
        <>
          <dt>Segments</dt>
          <dd id="sms-segments">{preview.sms.segments}</dd>
          <dt>Encoding</dt>
          <dd id="sms-encoding">
            {preview.sms.encoding}{" "}
            <span class="muted">
              ({preview.sms.units} {preview.sms.encoding === "GSM-7" ? "septets" : "UTF-16 units"};{" "}
              {preview.sms.encoding === "GSM-7" ? "160 alone, 153 a part" : "70 alone, 67 a part"})
            </span>
          </dd>
        </>
      )}
      {preview.channel === "sms" && (
        <>
          <dt>Country</dt>
          <dd id="preview-country">
            {preview.country ?? <span class="muted">none (give a number in E.164 to pick its variation)</span>}
          </dd>
        </>
      )}
      {preview.channel === "whatsapp" && (
        <>
          <dt>Category</dt>
          <dd>{template.category ?? <span class="muted">not chosen</span>}</dd>
        </>
      )}
      <dt>{preview.channel === "whatsapp" ? "Price per conversation" : "Price per message"}</dt>
      <dd id="preview-price">
        {preview.priceMicros === undefined ? <span class="muted">choose a category</span> : usd(preview.priceMicros)}
        {preview.sms && preview.sms.segments > 1 && preview.priceMicros !== undefined && (
          <span class="muted">{` (${preview.sms.segments} × ${usd(preview.priceMicros / preview.sms.segments)})`}</span>
        )}
      </dd>
      <dt>Status</dt>
      <dd>{template.status}</dd>
    </dl>
  );
}

/** The preview fragment: swapped into the editor by its script, or part of the page without script. */
export function PreviewPanel(props: { preview: Preview; template: Template }) {
  const { preview, template } = props;
  return (
    <div id="preview-panel" data-channel={preview.channel}>
      <Message preview={preview} />
      <Missing names={preview.rendered.missing} />
      {preview.otpFallback && (
        <p class="warning" id="preview-otp">
          OTP codes will not use this template: it must be approved and name both <code>{"{{otp_code}}"}</code> and{" "}
          <code>{"{{expiry_minutes}}"}</code>
          {template.channel === "whatsapp" && (
            <>
              {" "}(or <code>{"{{1}}"}</code> and <code>{"{{2}}"}</code>)
            </>
          )}
          {template.channel === "sms" && template.country_variations && ", with a variation for the number's country"}
          . Until then the built-in text is sent.
        </p>
      )}
      {template.status !== "approved" && template.channel !== "email" && template.channel !== "push" && (
        <p class="warning">Only approved templates can be sent: this one is {template.status}.</p>
      )}
      <Facts preview={preview} template={template} />
    </div>
  );
}

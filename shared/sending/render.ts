import { countryOfE164 } from "../phone.ts";
import type { Channel } from "../providers/types.ts";
import { MAX_RENDERED_CHARS, render, type Template } from "../templates.ts";
import type { Content, Recipient } from "./spec.ts";

/** What is known of the person a message goes to (a contact, or the names given on a direct send). */
export interface RecipientInfo {
  first_name?: string | null;
  last_name?: string | null;
  external_id?: string | null;
  email?: string | null;
  phone?: string | null;
}

/** A message's rendered text, or why it cannot be sent. */
export type RenderedContent =
  | { ok: true; subject?: string; html?: string; text?: string; title?: string; missing: string[] }
  | { ok: false; error: string; missing: string[] };

/** The contact variables of the specification, for the channel. */
export function recipientVariables(channel: Channel, info: RecipientInfo): Record<string, string> {
  const vars: Record<string, string> = {};
  if (info.first_name) vars.contact_first_name = info.first_name;
  if (info.last_name) vars.contact_last_name = info.last_name;
  if (info.external_id) vars.contact_external_id = info.external_id;
  if (info.phone && (channel === "sms" || channel === "whatsapp")) vars.contact_phone = info.phone;
  if (info.email && (channel === "push" || channel === "email")) vars.contact_email = info.email;
  return vars;
}

/**
 * Renders one channel's content for one recipient: `{{name}}` from the send's variables first, then
 * from the recipient's contact variables (a missing one renders empty and is reported in
 * `missing`). An SMS template with country variations serves only those countries.
 */
export function renderContent(
  content: Content,
  template: Template | undefined,
  variables: Record<string, unknown>,
  info: RecipientInfo,
  country?: string,
): RenderedContent {
  const vars = { ...recipientVariables(content.channel, info), ...variables };
  const missing: string[] = [];
  let tooLarge = false;
  const fill = (text: string | null | undefined): string | undefined => {
    if (text === null || text === undefined) return undefined;
    const out = render(text, vars);
    missing.push(...out.missing);
    if (out.tooLarge) tooLarge = true;
    return out.text;
  };
  const rendered = renderChannel(content, template, country, fill, missing);
  if (tooLarge) {
    return {
      ok: false,
      error: `Rendered message is over ${MAX_RENDERED_CHARS.toLocaleString("en-US")} characters`,
      missing,
    };
  }
  return rendered;
}

function renderChannel(
  content: Content,
  template: Template | undefined,
  country: string | undefined,
  fill: (text: string | null | undefined) => string | undefined,
  missing: string[],
): RenderedContent {
  switch (content.channel) {
    case "email": {
      if (template) {
        return {
          ok: true,
          subject: fill(template.subject) ?? "",
          html: fill(template.html),
          text: fill(template.text),
          missing,
        };
      }
      return {
        ok: true,
        subject: fill(content.subject) ?? "",
        html: fill(content.html),
        text: fill(content.text),
        missing,
      };
    }
    case "sms": {
      const body = smsBody(template, country);
      if (typeof body !== "string") return { ok: false, error: body.error, missing };
      return { ok: true, text: fill(body), missing };
    }
    case "whatsapp":
      return { ok: true, text: fill(template?.body) ?? "", missing };
    case "push":
      return {
        ok: true,
        title: fill(template ? template.title : content.title) ?? "",
        text: fill(template ? template.body : content.body) ?? "",
        missing,
      };
  }
}

/** The SMS text for a country: its variation when the template has variations, else the body. */
function smsBody(template: Template | undefined, country: string | undefined): string | { error: string } {
  if (!template) return { error: "SMS template not found" };
  const variations = template.country_variations;
  if (variations && Object.keys(variations).length > 0) {
    const body = country ? variations[country] ?? variations[country.toLowerCase()] : undefined;
    if (body === undefined) {
      return { error: `No SMS template variation for country ${country ?? "of this number (unknown)"}` };
    }
    return body;
  }
  if (template.body === null) return { error: "SMS template has no body" };
  return template.body;
}

/** Stands for a contact with every field set: what it leaves missing, no contact can fill. */
const ANY_CONTACT: RecipientInfo = { first_name: "-", last_name: "-", external_id: "-", email: "-", phone: "-" };

/**
 * The template variables of a send that render empty whoever receives it, as known when it is
 * accepted: for a direct send, those that neither `variables` nor its direct names fill; for a
 * contact or a fan-out, those that neither `variables` nor any contact variable of the channel can
 * fill (a contact without a first name is found only as its message is rendered).
 */
export function unfilledVariables(
  content: Content,
  template: Template | undefined,
  variables: Record<string, unknown>,
  recipient: Recipient,
): string[] {
  const direct = recipient.type === "direct";
  const info = direct ? { first_name: recipient.first_name, last_name: recipient.last_name } : ANY_CONTACT;
  // The country matters only to a template with variations (reading it from the number is the dear part).
  const varies = Object.keys(template?.country_variations ?? {}).length > 0;
  const country = direct && varies && content.channel === "sms" ? countryOfE164(recipient.address) : undefined;
  return [...new Set(renderContent(content, template, variables, info, country).missing)];
}

/** The words of a warning about template variables that render empty. */
export function missingVariablesWarning(names: string[]): string {
  return `Template variables with no value render empty: ${names.join(", ")}`;
}

/** The key (or id) of the template a content names, if it names one. */
export function templateKeyOf(content: Content): string | undefined {
  return content.channel === "push" ? content.template : content.template_key;
}

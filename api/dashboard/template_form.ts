import { MAX_KEY_LENGTH } from "../../shared/http/schemas.ts";
import type { Channel } from "../../shared/providers/types.ts";
import { ChannelSchema } from "../../shared/sending/spec.ts";
import type { Template, TemplateInput } from "../../shared/templates.ts";
import { TemplateBodies } from "../admin/schemas.ts";
import { field } from "./form.ts";

/** The channels a template may be of, in the order the pages show them. */
export const CHANNELS: readonly Channel[] = ChannelSchema.options;

/** Whether a path segment names a channel. */
export function isChannel(value: string | undefined): value is Channel {
  return CHANNELS.includes(value as Channel);
}

/** Approval states the data model holds (the admin API sets only the first two; a provider may reject). */
export const STATUSES = ["approved", "pending", "rejected"] as const;

/** WhatsApp's template categories. */
export const CATEGORIES = ["UTILITY", "MARKETING", "AUTHENTICATION"] as const;

/**
 * A template as typed in the editor, every field as entered (so that a refused form comes back as it
 * was): the fields of the template record, with SMS country variations as rows.
 */
export interface Draft {
  key: string;
  subject: string;
  html: string;
  text: string;
  title: string;
  body: string;
  category: string;
  status: string;
  /** [country, text] rows that name a country or carry a text (one may lack the other: refused on save). */
  variations: [string, string][];
}

/** Who and what a preview or a test is for: an address, the names and the send's variables. */
export interface Sample {
  /** An email address, an E.164 number or a push device token, by channel. */
  to: string;
  firstName: string;
  lastName: string;
  /** The variables as typed: one `name=value` a line. */
  variablesText: string;
}

/** The draft of a stored template (to fill the editor). */
export function draftOf(t: Template): Draft {
  return {
    key: t.key,
    subject: t.subject ?? "",
    html: t.html ?? "",
    text: t.text ?? "",
    title: t.title ?? "",
    body: t.body ?? "",
    category: t.category ?? "",
    status: t.status,
    variations: Object.entries(t.country_variations ?? {}),
  };
}

/** A blank draft of a new template. */
export function emptyDraft(): Draft {
  return {
    key: "",
    subject: "",
    html: "",
    text: "",
    title: "",
    body: "",
    category: "",
    status: "approved",
    variations: [],
  };
}

/** The most country variation rows a form is read for. */
const MAX_VARIATIONS = 250;

/** The draft a posted editor form holds. */
export function draftFromForm(form: Record<string, unknown>): Draft {
  const variations: [string, string][] = [];
  for (let i = 0; i < MAX_VARIATIONS && `variation_country_${i}` in form; i++) {
    const row: [string, string] = [field(form, `variation_country_${i}`), field(form, `variation_body_${i}`)];
    // The editor's spare blank row is no variation.
    if (row[0].trim() !== "" || row[1] !== "") variations.push(row);
  }
  return {
    key: field(form, "key").trim(),
    subject: field(form, "subject"),
    html: field(form, "html"),
    text: field(form, "text"),
    title: field(form, "title"),
    body: field(form, "body"),
    category: field(form, "category"),
    status: field(form, "status") || "approved",
    variations,
  };
}

/** The sample a posted editor form holds. */
export function sampleFromForm(form: Record<string, unknown>): Sample {
  return {
    to: field(form, "sample_to").trim(),
    firstName: field(form, "sample_first_name").trim(),
    lastName: field(form, "sample_last_name").trim(),
    variablesText: field(form, "sample_variables"),
  };
}

/** The variables of `name=value` lines (blank lines and lines without `=` are skipped). */
export function parseVariables(text: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf("=");
    if (at <= 0) continue;
    const name = line.slice(0, at).trim();
    if (name) variables[name] = line.slice(at + 1).trim();
  }
  return variables;
}

/**
 * What a draft stores, validated by the admin API's own per-channel schema (the dashboard adds only
 * the `rejected` status, which the data model holds); or what is wrong with it, in words.
 */
export function validateDraft(
  channel: Channel,
  draft: Draft,
): { ok: true; input: TemplateInput } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  if (draft.key === "") errors.push("Give the template a key: sends name it by this key");
  if (draft.key.length > MAX_KEY_LENGTH) errors.push(`The key is too long (at most ${MAX_KEY_LENGTH} characters)`);
  if (!(STATUSES as readonly string[]).includes(draft.status)) errors.push("Choose an approval status");
  const optional = (text: string) => text === "" ? undefined : text;
  const body = {
    email: { subject: draft.subject, html: draft.html, text: optional(draft.text) },
    sms: {
      body: draft.body,
      country_variations: draft.variations.length > 0 ? Object.fromEntries(draft.variations) : undefined,
    },
    whatsapp: { body: draft.body, category: draft.category },
    push: { title: draft.title, body: draft.body },
  }[channel];
  const parsed = TemplateBodies[channel].safeParse(body);
  if (!parsed.success) errors.push(...parsed.error.issues.map(issueText));
  if (!parsed.success || errors.length > 0) return { ok: false, errors };
  return { ok: true, input: { ...parsed.data, status: draft.status as Template["status"] } };
}

/** A schema issue in the editor's words. */
function issueText(issue: { path: PropertyKey[]; message: string }): string {
  const name = String(issue.path[0] ?? "");
  const label: Record<string, string> = {
    subject: "The subject",
    html: "The HTML body",
    title: "The title",
    body: "The text",
    category: "The category",
    country_variations: "The country variations",
  };
  if (name === "country_variations" && issue.path.length > 1) {
    return `The variation for ${String(issue.path[1])} needs a text`;
  }
  if (name in label && /too small|expected string|invalid option/i.test(issue.message)) {
    return `${label[name]} is required`;
  }
  return name in label ? `${label[name]}: ${issue.message}` : issue.message;
}

/** A template of the draft, as the send path would read it from the store (for the preview). */
export function draftTemplate(channel: Channel, teamId: string, draft: Draft): Template {
  const variations = draft.variations.filter(([country]) => country.trim() !== "");
  const now = new Date();
  return {
    id: "00000000-0000-0000-0000-000000000000",
    team_id: teamId,
    channel,
    key: draft.key,
    subject: channel === "email" ? draft.subject : null,
    html: channel === "email" ? draft.html || null : null,
    text: channel === "email" ? draft.text || null : null,
    title: channel === "push" ? draft.title : null,
    body: channel === "email" ? null : draft.body,
    category: channel === "whatsapp" && (CATEGORIES as readonly string[]).includes(draft.category)
      ? draft.category as Template["category"]
      : null,
    country_variations: channel === "sms" && variations.length > 0
      ? Object.fromEntries(variations.map(([country, text]) => [country.trim().toUpperCase(), text]))
      : null,
    status: (STATUSES as readonly string[]).includes(draft.status) ? draft.status as Template["status"] : "approved",
    created_at: now,
    updated_at: now,
  };
}

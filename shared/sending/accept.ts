import { newUlid, newUuidV7 } from "./ids.ts";
import { ContactFinder } from "../contacts/finder.ts";
import type { ContactRow } from "../contacts/queries.ts";
import type { Deps } from "../deps.ts";
import { NotFoundError, ValidationError } from "../errors.ts";
import { type Acceptor, sendAcceptor } from "./acceptor.ts";
import { SendLookups } from "./lookups.ts";
import { burstDeferral } from "./pressure.ts";
import { insufficientBalanceError, messageCost } from "./pricing.ts";
import type { Config } from "../config.ts";
import { countryOfE164, e164Of } from "../phone.ts";
import { findSegment } from "../segments.ts";
import type { Template } from "../templates.ts";
import {
  missingVariablesWarning,
  type RecipientInfo,
  renderContent,
  templateKeyOf,
  unfilledVariables,
} from "./render.ts";
import { noProviderNote, outboxForWantOfProvider } from "../providers/registry.ts";
import type { Channel } from "../providers/types.ts";
import { holdersAmong } from "../channel_accounts.ts";
import { type Content, isSingleRecipient, type Recipient, type SendSpec } from "./spec.ts";
import { parseTimestamp } from "../timestamps.ts";
import { isEmail } from "../email.ts";

/** The accept path's shared parts: cached look-ups, grouped contact look-ups and the group-committing acceptor. */
export interface SendingService {
  deps: Deps;
  lookups: SendLookups;
  contacts: ContactFinder;
  acceptor: Acceptor<SendSpec>;
}

const services = new WeakMap<Deps, SendingService>();

/** The sending service of `deps` (one per deps, shared by every send route). */
export function sendingService(deps: Deps): SendingService {
  let service = services.get(deps);
  if (!service) {
    const acceptor = sendAcceptor(deps, burstDeferral(deps.config));
    service = { deps, lookups: new SendLookups(deps.sql, deps.now), contacts: new ContactFinder(deps.sql), acceptor };
    services.set(deps, service);
  }
  return service;
}

/** The schedule fields a send may carry (the names differ between endpoints and clients). */
export interface ScheduleFields {
  trigger_at?: string | null;
  triggerAt?: string | null;
  scheduled_at?: string | null;
}

/**
 * When a send is due: undefined for now, else ms since the epoch. Whichever of trigger_at,
 * triggerAt or scheduled_at is given (not null) is read: 400 'Invalid <field> format' when it is no
 * date (the empty string too, as on the event send), '<field> must be a future date' when it is not
 * in the future.
 */
export function scheduledFor(body: ScheduleFields, now: number): number | undefined {
  const fields = ["trigger_at", "triggerAt", "scheduled_at"] as const;
  const field = fields.find((f) => body[f] !== undefined && body[f] !== null);
  if (!field) return undefined;
  const text = body[field]!;
  const at = parseTimestamp(text);
  if (at === undefined) {
    throw new ValidationError(`Invalid ${field} format`, "invalid_format", {
      details: { field, code: "invalid_format" },
    });
  }
  if (at <= now) {
    throw new ValidationError(`${field} must be a future date`, "invalid_value", {
      details: { field, code: "invalid_value" },
    });
  }
  return at;
}

/** Ids of a new send made at `now`: trigger (UUID v7: its accept time can be read back) and queue job id (ulid). */
export function newSendIds(now = Date.now()): { trigger_id: string; job_id: string } {
  return { trigger_id: newUuidV7(now), job_id: newUlid() };
}

/** What a new send is made of: the route's body gives its recipient_type, variables, metadata and campaign. */
export interface NewSend {
  team_id: string;
  /** Test key: outbox only, never charged. */
  sandbox: boolean;
  trigger_type: SendSpec["trigger_type"];
  body: {
    recipient_type: string;
    variables?: Record<string, unknown> | unknown[];
    metadata?: Record<string, unknown>;
    campaign_name?: string;
  };
  recipient: Recipient;
  /** One execution per content. */
  contents: Content[];
  /** The variables, when not `variablesOf(body.variables)`. */
  variables?: Record<string, unknown>;
  now: number;
  /** When it is due (ms since the epoch); undefined for now. */
  at: number | undefined;
}

/** A new send with fresh ids. */
export function newSendSpec(send: NewSend): SendSpec {
  // An execution id carries its trigger's time: a pending execution is found in its trigger's pending page.
  const filed = Date.now();
  return {
    ...newSendIds(filed),
    team_id: send.team_id,
    sandbox: send.sandbox,
    trigger_type: send.trigger_type,
    recipient_type: send.body.recipient_type,
    recipient: send.recipient,
    executions: send.contents.map((content) => ({ id: newUuidV7(filed), content })),
    variables: send.variables ?? variablesOf(send.body.variables),
    metadata: send.body.metadata ?? {},
    campaign_name: send.body.campaign_name,
    created_at: send.now,
    scheduled_for: send.at ?? null,
  };
}

/**
 * The asynchronous send body (201): `delay_ms` only where the channel shows it, and with `executionFields`
 * the fields of the specification's alternative email shape too, so that a client written for either
 * finds what it reads. `estimated_recipients` is 1 for one address or contact, null for a fan-out: its
 * count is `total_contacts` of GET /triggers/{id} as the fan-out runs (a count here would scan them).
 */
export function acceptedBody(spec: SendSpec, now: number, options: { delayMs: boolean; executionFields?: boolean }) {
  const scheduled = spec.scheduled_for !== null;
  return {
    success: true as const,
    trigger_id: spec.trigger_id,
    job_id: spec.job_id,
    message: scheduled ? "scheduled successfully" : "queued successfully",
    ...(scheduled ? { scheduled_for: new Date(spec.scheduled_for!).toISOString() } : {}),
    ...(scheduled && options.delayMs ? { delay_ms: Math.max(0, spec.scheduled_for! - now) } : {}),
    ...(options.executionFields
      ? {
        execution_id: spec.executions[0].id,
        status: "queued" as const,
        recipient_type: spec.recipient_type,
        estimated_recipients: isSingleRecipient(spec.recipient) ? 1 : null,
        created_at: new Date(spec.created_at).toISOString(),
      }
      : {}),
    data: { trigger_id: spec.trigger_id, job_id: spec.job_id },
  };
}

/**
 * The channels of a send whose live messages are kept in the outbox, free, for want of a provider:
 * those the service has no provider for, save the ones the team carries through channel accounts of
 * its own (the worker sends those through them and charges them, as with a provider: worker/deliver.ts).
 * The accounts are read only when a channel has no provider and CHANNEL_ACCOUNTS_KEY is set: a service
 * with a provider for every channel, or one that cannot open accounts, asks nothing more of the
 * database to accept a send.
 */
export async function outboxedChannels(service: SendingService, spec: SendSpec): Promise<Set<Channel>> {
  const channels = spec.executions.map((e) => e.content.channel);
  const wanting = channels.filter((channel) => outboxForWantOfProvider(service.deps, channel, spec.sandbox));
  if (wanting.length === 0) return new Set();
  const holders = await holdersAmong(service.deps, [spec.team_id]);
  return new Set(wanting.filter((channel) => !holders.has(spec.team_id, channel)));
}

/**
 * What the 201 of a send warns of, empty when nothing: template variables that nothing supplies
 * (they render empty; see unfilledVariables), and a channel of `outboxed` (outboxedChannels: its live
 * messages are kept in the outbox and not charged). The send is accepted either way.
 */
export async function sendWarnings(
  service: SendingService,
  spec: SendSpec,
  outboxed: ReadonlySet<Channel>,
): Promise<string[]> {
  const warnings: string[] = [];
  for (const { content } of spec.executions) {
    const key = templateKeyOf(content);
    const template = key === undefined ? undefined : await service.lookups.template(spec.team_id, content.channel, key);
    const missing = unfilledVariables(content, template, spec.variables, spec.recipient);
    if (missing.length > 0) warnings.push(`${content.channel}: ${missingVariablesWarning(missing)}`);
    if (outboxed.has(content.channel)) warnings.push(noProviderNote(content.channel));
  }
  return warnings;
}

/** The team's contact with this external id, else 404 "Contact with external_id '…' not found". */
export async function contactOrThrow(deps: Deps, teamId: string, externalId: string): Promise<ContactRow> {
  const contact = await sendingService(deps).contacts.byExternalId(teamId, externalId);
  if (!contact) throw new NotFoundError(`Contact with external_id '${externalId}' not found`, "contact_not_found");
  return contact;
}

/**
 * 400 when the wallet cannot pay `required` micro-dollars: the balance as this process last changed or
 * read it (a change by another process shows within a few seconds; see recentBalance).
 */
export async function ensureAffordable(service: SendingService, teamId: string, required: number): Promise<void> {
  if (required <= 0) return;
  const available = await service.lookups.balance(teamId);
  if (available < required) throw insufficientBalanceError(required, available);
}

/** Tags from `tag` or `tags`, each a string or a list (comma-separated strings are split). */
export function tagsOf(body: { tag?: string | string[]; tags?: string | string[] }): string[] {
  const raw = body.tags ?? body.tag ?? [];
  const list = Array.isArray(raw) ? raw : raw.split(",");
  return [...new Set(list.map((t) => t.trim()).filter((t) => t !== ""))];
}

/** 400 '<field> should not be empty' (a required-when field is missing). */
export function required(field: string): ValidationError {
  return new ValidationError([`${field} should not be empty`]);
}

/** Variables as an object: a list (WhatsApp clients send ["a", "b"]) becomes {"1": "a", "2": "b"}. */
export function variablesOf(value: Record<string, unknown> | unknown[] | undefined): Record<string, unknown> {
  if (!value) return {};
  if (Array.isArray(value)) return Object.fromEntries(value.map((v, i) => [String(i + 1), v]));
  return value;
}

/**
 * The recipient of a tag, segment or all send: 400 when the tags are missing (`tagField` names the
 * field in the message), 404 "Segment '…' not found" for an unknown segment.
 */
export async function fanOutRecipient(
  deps: Deps,
  teamId: string,
  type: "tag" | "segment" | "all",
  body: { tag?: string | string[]; tags?: string | string[]; segment_id?: string },
  tagField = "tag",
): Promise<Recipient> {
  switch (type) {
    case "tag": {
      const tags = tagsOf(body);
      if (tags.length === 0) throw required(tagField);
      return { type: "tag", tags };
    }
    case "segment": {
      if (!body.segment_id) throw required("segment_id");
      if (!await findSegment(deps.sql, teamId, body.segment_id)) {
        throw new NotFoundError(`Segment '${body.segment_id}' not found`, "segment_not_found");
      }
      return { type: "segment", segment_id: body.segment_id };
    }
    case "all":
      return { type: "all" };
  }
}

/** 400 "Template '…' not found for team". */
export function templateNotFound(key: string): ValidationError {
  return new ValidationError(`Template '${key}' not found for team`, "template_not_found");
}

/** 400 "Template '…' is not approved". */
export function templateNotApproved(key: string): ValidationError {
  return new ValidationError(`Template '${key}' is not approved`, "template_not_approved");
}

/** 400 '<field> must be in E.164 format'. */
export function notE164(field: string): ValidationError {
  return new ValidationError(`${field} must be in E.164 format`, "invalid_format", {
    details: { field, code: "invalid_format" },
  });
}

/** What is known of a contact for rendering. */
export function contactInfo(contact: ContactRow): RecipientInfo {
  return {
    first_name: contact.first_name,
    last_name: contact.last_name,
    external_id: contact.external_id,
    email: contact.email,
    phone: e164Of(contact.custom_fields?.phone) ?? null,
  };
}

/**
 * What one message of `content` would cost a live key, rendered for the recipient when known (an
 * SMS is billed per segment): the amount the wallet must cover before a send is queued.
 */
export function costOfOne(
  config: Config,
  content: Content,
  template: Template | undefined,
  variables: Record<string, unknown>,
  info: RecipientInfo,
  to?: string,
): number {
  const country = to && (content.channel === "sms" || content.channel === "whatsapp") ? countryOfE164(to) : undefined;
  const rendered = renderContent(content, template, variables, info, country);
  return messageCost(config, content, rendered.ok ? rendered.text : "");
}

/** 400 unless `from` is an email address on a verified domain of the team. */
export async function checkSender(service: SendingService, teamId: string, from: string): Promise<void> {
  if (!isEmail(from)) throw new ValidationError(["from_email must be an email"]);
  if (!await service.lookups.verifiedSender(teamId, from)) {
    throw new ValidationError(`Sender address ${from} is not on a verified domain`, "unverified_sender", {
      details: { field: "from_email", code: "unverified_domain" },
    });
  }
}

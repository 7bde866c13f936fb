import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { newUlid } from "../shared/sending/ids.ts";
import type { Config } from "../shared/config.ts";
import { DEFAULT_PLATFORM, PUSH_ACTION_LIMITS } from "../shared/contacts/device_tokens.ts";
import type { Identity } from "../shared/identities.ts";
import { countryOfE164, e164Of } from "../shared/phone.ts";
import type { Channel, OutboundMessage } from "../shared/providers/types.ts";
import { messageCost } from "../shared/sending/pricing.ts";
import { type RecipientInfo, renderContent } from "../shared/sending/render.ts";
import type { Content, ExecutionSpec, SendSpec, WhatsAppContent } from "../shared/sending/spec.ts";
import type { Template } from "../shared/templates.ts";
import type { Device, RecipientContact } from "./recipients.ts";
import { type QuietHold, withHold } from "./hold.ts";

/** A message ready to be recorded and, unless its outcome is already decided, sent. */
export interface Prepared {
  /** A new message id (ulid); a message already recorded for this recipient keeps its own. */
  id: string;
  team_id: string;
  trigger_id: string;
  execution_id: string;
  channel: Channel;
  batch_no: number;
  /** The template the content names (key, or a push template's key or id); null for raw content. */
  template_key: string | null;
  /** The delivery key within the execution: the same recipient never gets two messages. */
  recipient: string;
  to_address: string | null;
  contact_id: string | null;
  sandbox: boolean;
  /** Decided without a provider: filtered (preferences …) or failed (no address …). */
  outcome?: { status: "filtered" | "failed"; error: string };
  /** The message to hand to the provider (its id is set when the row id is known). */
  message?: OutboundMessage;
  /** What the message costs the team, in micro-dollars (0 in sandbox). */
  cost: number;
  /** A WhatsApp message's category: it is charged once per conversation (see conversations.ts). */
  conversation_category?: WhatsAppContent["conversation_category"];
  /** The template variables that had no value and rendered empty (recorded on the message). */
  missing?: string[];
  /** Due inside its recipient's quiet hours: recorded, and sent at this instant (ms; worker/hold.ts). */
  held_until?: number;
}

/** One recipient of an execution: a direct address, or a contact (with its devices for push). */
export type Unit =
  | { kind: "direct"; address: string; info: RecipientInfo; platform?: Device["platform"] }
  | { kind: "contact"; contact: RecipientContact; devices?: Device[] };

/** What preparing an execution's messages needs, resolved once per batch. */
export interface ExecutionContext {
  config: Config;
  spec: SendSpec;
  execution: ExecutionSpec;
  batchNo: number;
  /** The template of the content (undefined for raw content, or when it is gone). */
  template: Template | undefined;
  /** Why every message of this execution fails (template gone or not approved), if it does. */
  failure?: string;
  /** The sender identity for a recipient's country (SMS picks per country). */
  sender: (country: string | undefined) => Promise<Identity | undefined>;
  /** Variables named by the templates that had no value (logged once per batch). */
  missing: Set<string>;
  /** The team's quiet hours, when they apply to this execution's content (worker/hold.ts). */
  quiet?: QuietHold;
}

/** The preference category a content is sent under. */
export function categoryOf(content: Content): "transactional" | "promotional" {
  if (content.channel === "whatsapp") {
    return content.conversation_category === "MARKETING" ? "promotional" : "transactional";
  }
  return content.category;
}

/** Why a contact is not sent to (inactive, unsubscribed, opted out), if it is not. */
export function filterReason(contact: RecipientContact, channel: Channel, category: string): string | undefined {
  if (!contact.is_active) return "Contact is inactive";
  if (contact.is_unsubscribed) return "Contact is unsubscribed";
  const pref = contact.preferences?.[channel] as Record<string, boolean> | null | undefined;
  // A contact stored without this preference has the defaults: promotional off except on SMS.
  const subscribed = pref?.[category] ?? (category === "transactional" || channel === "sms");
  if (!subscribed) return `Contact has not opted in to ${channel} ${category} messages`;
  return undefined;
}

/** The messages of one execution for its recipients (push: one per device). */
export async function prepareMessages(ctx: ExecutionContext, units: Unit[]): Promise<Prepared[]> {
  const out: Prepared[] = [];
  for (const unit of units) {
    const messages = unit.kind === "direct"
      ? [await prepareDirect(ctx, unit)]
      : await prepareContact(ctx, unit.contact, unit.devices ?? []);
    // A direct address has no zone of its own: the team's is read.
    const zone = unit.kind === "contact" ? unit.contact.timezone : null;
    out.push(...messages.map((p) => withHold(ctx.quiet, zone, p)));
  }
  return out;
}

/** Longest address kept as it is in a message's delivery key (the key is indexed; see recipientKey). */
const LONGEST_KEYED_ADDRESS = 2_048;

/**
 * The delivery key of an address: the address itself, or for a push token longer than 2,048
 * characters (up to 4,096 are valid) `sha256:` and its digest, since the key shares a btree row of
 * at most 2,704 bytes with the execution id. Shorter addresses keep their own text, as every
 * message recorded before long tokens were allowed did, so a job redelivered across an upgrade
 * still finds its message.
 */
export function recipientKey(address: string): string {
  if (address.length <= LONGEST_KEYED_ADDRESS) return address;
  return `sha256:${bytesToHex(sha256(utf8ToBytes(address)))}`;
}

/** The template a content names, as the activity log filters messages by it. */
export function templateKeyOf(content: Content): string | null {
  return (content.channel === "push" ? content.template : content.template_key) ?? null;
}

function base(ctx: ExecutionContext, recipient: string, to: string | null, contactId: string | null): Prepared {
  return {
    id: newUlid(),
    team_id: ctx.spec.team_id,
    trigger_id: ctx.spec.trigger_id,
    execution_id: ctx.execution.id,
    channel: ctx.execution.content.channel,
    batch_no: ctx.batchNo,
    template_key: templateKeyOf(ctx.execution.content),
    recipient,
    to_address: to,
    contact_id: contactId,
    sandbox: ctx.spec.sandbox,
    cost: 0,
  };
}

function decided(p: Prepared, status: "filtered" | "failed", error: string): Prepared {
  return { ...p, outcome: { status, error } };
}

async function prepareDirect(ctx: ExecutionContext, unit: Extract<Unit, { kind: "direct" }>): Promise<Prepared> {
  const p = base(ctx, recipientKey(unit.address), unit.address, null);
  return await complete(ctx, p, unit.address, unit.info, unit.platform);
}

async function prepareContact(
  ctx: ExecutionContext,
  contact: RecipientContact,
  devices: Device[],
): Promise<Prepared[]> {
  const content = ctx.execution.content;
  const info: RecipientInfo = {
    first_name: contact.first_name,
    last_name: contact.last_name,
    external_id: contact.external_id,
    email: contact.email,
    phone: contact.phone,
  };
  const reason = filterReason(contact, content.channel, categoryOf(content));
  switch (content.channel) {
    case "email": {
      const p = base(ctx, contact.id, contact.email, contact.id);
      return [reason ? decided(p, "filtered", reason) : await complete(ctx, p, contact.email, info)];
    }
    case "sms":
    case "whatsapp": {
      const phone = e164Of(contact.phone);
      const p = base(ctx, contact.id, phone ?? null, contact.id);
      if (reason) return [decided(p, "filtered", reason)];
      if (!phone) return [decided(p, "failed", "Contact has no phone number in E.164 format (custom_fields.phone)")];
      return [await complete(ctx, p, phone, { ...info, phone })];
    }
    case "push": {
      if (reason || devices.length === 0) {
        const p = base(ctx, contact.id, null, contact.id);
        return [reason ? decided(p, "filtered", reason) : decided(p, "failed", "Contact has no push device tokens")];
      }
      const out: Prepared[] = [];
      for (const device of devices) {
        const p = base(ctx, `${contact.id}:${recipientKey(device.token)}`, device.token, contact.id);
        out.push(await complete(ctx, p, device.token, info, device.platform, device.provider));
      }
      return out;
    }
  }
}

/** Renders, prices and builds the provider message of one recipient. */
async function complete(
  ctx: ExecutionContext,
  p: Prepared,
  to: string,
  info: RecipientInfo,
  platform?: Device["platform"],
  pushService?: Device["provider"],
): Promise<Prepared> {
  if (ctx.failure) return decided(p, "failed", ctx.failure);
  const content = ctx.execution.content;
  const country = content.channel === "sms" || content.channel === "whatsapp" ? countryOfE164(to) : undefined;
  const rendered = renderContent(content, ctx.template, ctx.spec.variables, info, country);
  for (const name of rendered.missing) ctx.missing.add(name);
  if (!rendered.ok) return decided(p, "failed", rendered.error);
  const sender = await ctx.sender(country);
  const message: OutboundMessage = {
    id: p.id,
    teamId: p.team_id,
    channel: content.channel,
    to,
    from: sender?.from_address,
    triggerId: p.trigger_id,
    text: rendered.text,
  };
  switch (content.channel) {
    case "email":
      message.from = content.from_email ?? sender?.from_address;
      message.fromName = content.from_name ?? sender?.name ?? undefined;
      message.replyTo = content.reply_to;
      message.subject = rendered.subject;
      message.html = rendered.html;
      break;
    case "push":
      message.title = rendered.title;
      message.platform = platform;
      // A device's stored service; a direct token's is derived from its form by the push provider.
      message.pushService = pushService;
      message.imageUrl = content.image_url;
      message.clickAction = content.click_action;
      message.actions = content.actions?.slice(0, PUSH_ACTION_LIMITS[platform ?? DEFAULT_PLATFORM]);
      message.data = stringValues(content.custom_data);
      message.priority = content.category === "promotional" ? "normal" : "high";
      break;
  }
  const cost = ctx.spec.sandbox ? 0 : messageCost(ctx.config, content, rendered.text);
  const priced = content.channel === "whatsapp"
    ? { ...p, message, cost, conversation_category: content.conversation_category }
    : { ...p, message, cost };
  return rendered.missing.length > 0 ? { ...priced, missing: [...new Set(rendered.missing)] } : priced;
}

/** FCM data values must be strings. */
function stringValues(data: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!data) return undefined;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

import { z } from "@hono/zod-openapi";
import type { Team } from "../../shared/deps.ts";
import { ValidationError } from "../../shared/errors.ts";
import type { Channel } from "../../shared/providers/types.ts";
import type { SendingService } from "../../shared/sending/accept.ts";
import { newUuidV7, uuidV7Time } from "../../shared/sending/ids.ts";
import type { Content, Recipient, SendSpec } from "../../shared/sending/spec.ts";
import { templateKeyOf } from "../../shared/sending/render.ts";

const CHANNELS: readonly Channel[] = ["email", "sms", "whatsapp", "push"];

/** The longest wait for a WhatsApp delivery report: a day (WhatsApp's customer service window). */
export const MAX_FALLBACK_AFTER_MINUTES = 1_440;

/** The fallback fields every single-channel send body takes (validated by {@linkcode fallbackContents}). */
export const FallbackFields = {
  fallback_channels: z.array(z.string()).max(CHANNELS.length).optional().openapi({
    description: "Channels tried in order for a contact the send's channel cannot reach (no address), or whose " +
      "message fails; each sends the same `template_key` (its own template under the key) and is charged as that " +
      "channel. Not for direct sends. A contact whose preference is off is never fallen back around.",
    example: ["sms"],
  }),
  fallback_after_minutes: z.number().optional().openapi({
    description: "A WhatsApp message followed by a fallback channel also falls back when no delivery (or read) " +
      `report came within this many minutes (fractions allowed, at most ${MAX_FALLBACK_AFTER_MINUTES})`,
  }),
};

/** What a send body says of fallbacks. */
export interface FallbackRequest {
  fallback_channels?: string[];
  fallback_after_minutes?: number;
}

/** 400 naming a fallback field, in the specification's error style. */
function invalid(field: keyof FallbackRequest, message: string, code = "invalid_value"): ValidationError {
  return new ValidationError(message, "invalid_fallback", { details: { field, code } });
}

/**
 * The contents of a send's fallback channels, in order: the same template key on each, under the
 * category of the send's first content, which they back up; empty when the body names none. 400 for
 * a direct recipient, a channel that is not one, one of the send's own channels (a multi-channel
 * trigger has several: a contact would get that channel twice), a repeat, a channel without that
 * template (approved, for SMS and WhatsApp), a send without a template, and a
 * `fallback_after_minutes` out of range or with no WhatsApp message followed by a fallback.
 */
export async function fallbackContents(
  service: SendingService,
  team: Team,
  body: FallbackRequest,
  send: { recipient: Recipient; contents: Content[] },
): Promise<Content[]> {
  const channels = body.fallback_channels ?? [];
  if (channels.length === 0) {
    if (body.fallback_after_minutes !== undefined) {
      throw invalid("fallback_after_minutes", fallbackAfterProblem(body.fallback_after_minutes, [])!);
    }
    return [];
  }
  if (send.recipient.type === "direct") {
    throw invalid(
      "fallback_channels",
      "fallback_channels needs a send to contacts (recipient_type contact, tag, segment or all)",
    );
  }
  const first = send.contents[0];
  const own = new Set<string>(send.contents.map((c) => c.channel));
  const seen = new Set<string>();
  for (const channel of channels) {
    if (!CHANNELS.includes(channel as Channel)) {
      throw invalid("fallback_channels", "Valid fallback channels are: email, sms, whatsapp, push");
    }
    if (own.has(channel)) {
      throw invalid("fallback_channels", `fallback_channels cannot name the send's own channel (${channel})`);
    }
    if (seen.has(channel)) throw invalid("fallback_channels", `fallback_channels names ${channel} twice`);
    seen.add(channel);
  }
  const key = templateKeyOf(first);
  if (key === undefined) {
    throw invalid(
      "fallback_channels",
      "fallback_channels needs a template_key: each fallback channel sends that template",
    );
  }
  const category = first.channel === "whatsapp"
    ? first.conversation_category === "MARKETING" ? "promotional" : "transactional"
    : first.category;
  const contents: Content[] = [];
  for (const channel of channels as Channel[]) {
    const template = await service.lookups.template(team.id, channel, key);
    if (!template) {
      throw invalid(
        "fallback_channels",
        `Template '${key}' not found for fallback channel ${channel}`,
        "template_not_found",
      );
    }
    if ((channel === "sms" || channel === "whatsapp") && template.status !== "approved") {
      throw invalid(
        "fallback_channels",
        `Template '${key}' is not approved for fallback channel ${channel}`,
        "template_not_approved",
      );
    }
    contents.push(fallbackContent(channel, key, category, template.category));
  }
  const minutes = body.fallback_after_minutes;
  const problem = minutes === undefined ? undefined : fallbackAfterProblem(minutes, [first.channel, ...channels]);
  if (problem) throw invalid("fallback_after_minutes", problem);
  return contents;
}

/**
 * What is wrong with `fallback_after_minutes` on a chain of channels (the message's own, then its
 * fallbacks), if anything: the rule of sends and of workflow steps alike.
 */
export function fallbackAfterProblem(minutes: number, chain: string[]): string | undefined {
  if (chain.length < 2) return "fallback_after_minutes needs fallback_channels";
  if (!(minutes > 0 && minutes <= MAX_FALLBACK_AFTER_MINUTES)) {
    return `fallback_after_minutes must be more than 0 and at most ${MAX_FALLBACK_AFTER_MINUTES}`;
  }
  if (!chain.slice(0, -1).includes("whatsapp")) {
    return "fallback_after_minutes needs a WhatsApp message followed by a fallback channel";
  }
}

/** The content of a fallback channel: the template under `key`, sent under the send's category. */
function fallbackContent(
  channel: Channel,
  key: string,
  category: "transactional" | "promotional",
  templateCategory: "MARKETING" | "UTILITY" | "AUTHENTICATION" | null,
): Content {
  switch (channel) {
    case "email":
      return { channel, template_key: key, category };
    case "sms":
      return { channel, template_key: key, category };
    case "whatsapp":
      return {
        channel,
        template_key: key,
        conversation_category: templateCategory ?? (category === "promotional" ? "MARKETING" : "UTILITY"),
      };
    case "push":
      return { channel, template: key, category };
  }
}

/**
 * `spec` with its fallback executions chained after its first execution (a multi-channel trigger's
 * others have none): each names the one before it (`fallback_for`), and the wait for a WhatsApp
 * delivery report is kept with the send.
 */
export function withFallbacks(spec: SendSpec, fallbacks: Content[], body: FallbackRequest): SendSpec {
  if (fallbacks.length === 0) return spec;
  const executions = [...spec.executions];
  let before = executions[0].id;
  for (const content of fallbacks) {
    // Ids of the trigger's time, as newSendSpec gives them: found in the trigger's pending page.
    const id = newUuidV7(uuidV7Time(spec.trigger_id));
    executions.push({ id, content, fallback_for: before });
    before = id;
  }
  const after = body.fallback_after_minutes;
  return { ...spec, executions, ...(after === undefined ? {} : { fallback_after_minutes: after }) };
}

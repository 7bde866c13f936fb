import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Config } from "../../shared/config.ts";
import type { ContactRow } from "../../shared/contacts/queries.ts";
import type { Deps, Team } from "../../shared/deps.ts";
import { NotFoundError, RateLimitError, ValidationError } from "../../shared/errors.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import type { Channel } from "../../shared/providers/types.ts";
import {
  checkSender,
  contactInfo,
  contactOrThrow,
  costOfOne,
  ensureAffordable,
  fanOutRecipient,
  newSendSpec,
  outboxedChannels,
  required,
  scheduledFor,
  sendingService,
  sendWarnings,
  templateNotApproved,
  variablesOf,
} from "../../shared/sending/accept.ts";
import type { Content, Recipient } from "../../shared/sending/spec.ts";
import type { Template } from "../../shared/templates.ts";
import { errors, TriggerAccepted, TriggerBody } from "./schemas.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";
import { SEND_HEADERS, tag } from "../../shared/http/openapi.ts";
import { TRIGGER_EXAMPLES } from "../sending/examples.ts";
import { fallbackContents, withFallbacks } from "../sending/fallback.ts";

const CHANNELS: readonly Channel[] = ["email", "sms", "whatsapp", "push"];

/** Channels one trigger may use on a plan. */
export function channelsPerTrigger(plan: Team["plan"]): number {
  return plan === "free" ? 2 : 4;
}

/** Multi-channel triggers per minute on a plan. */
export function triggersPerMinute(config: Config, plan: Team["plan"]): number {
  switch (plan) {
    case "free":
      return 10;
    case "pro":
      return 100;
    case "plus":
      return 500;
    case "enterprise":
      return config.TRIGGER_RATE_LIMIT_ENTERPRISE;
  }
}

/**
 * POST /messages/trigger: one template key on several channels, one execution per channel.
 * Answers 200 with `channels_triggered`.
 */
export function addTriggerRoute(app: OpenAPIHono<AppEnv>, deps: Deps): void {
  const service = sendingService(deps);
  app.openapi(
    createRoute({
      method: "post",
      path: "/trigger",
      tags: tag("Multi-channel"),
      summary: "Send one template on several channels",
      description:
        "One `template_key` for every channel in `channels` (each channel uses its own template under the key), to " +
        "a contact, the contacts with `tags`, a segment or everyone. Each channel becomes an execution of the one " +
        "trigger. `fallback_channels` back up the first of `channels` (a channel of the trigger cannot be one). " +
        "Answers 200 with `channels_triggered`.",
      parameters: SEND_HEADERS,
      request: { body: jsonBody(TriggerBody, TRIGGER_EXAMPLES) },
      responses: { 200: jsonResponse(TriggerAccepted, "Queued or scheduled"), ...errors(400, 403, 404, 409, 422, 429) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const team = c.get("team");
      const now = deps.now();
      if (body.channels.some((ch) => !CHANNELS.includes(ch as Channel))) {
        throw new ValidationError("Valid channels are: email, sms, whatsapp, push", "invalid_channel", {
          details: { field: "channels", code: "invalid_value" },
        });
      }
      const channels = [...new Set(body.channels)] as Channel[];
      const allowed = channelsPerTrigger(team.plan);
      if (channels.length > allowed) {
        throw new ValidationError(
          `Your plan allows at most ${allowed} channels per trigger`,
          "too_many_channels",
          { details: { field: "channels", code: "too_many" } },
        );
      }
      const perMinute = triggersPerMinute(deps.config, team.plan);
      const hit = await deps.counter.hit("trigger", team.id, perMinute, 60_000, now);
      if (!hit.allowed) {
        throw new RateLimitError(
          `Trigger rate limit exceeded: ${perMinute} per minute`,
          (hit.resetAt - now) / 1000,
          "trigger_rate_limit_exceeded",
        );
      }
      const at = scheduledFor(body, now);
      if (!body.template_key) throw required("template_key");
      const key = body.template_key;

      let recipient: Recipient;
      let contact: ContactRow | undefined;
      if (body.recipient_type === "contact") {
        if (!body.contact_external_id) throw required("contact_external_id");
        contact = await contactOrThrow(deps, team.id, body.contact_external_id);
        recipient = { type: "contact", contact_id: contact.id, external_id: contact.external_id };
      } else {
        recipient = await fanOutRecipient(deps, team.id, body.recipient_type, body, "tags");
      }

      const templates = new Map<Channel, Template | undefined>();
      for (const ch of channels) templates.set(ch, await service.lookups.template(team.id, ch, key));
      const pushGiven = body.push_title !== undefined && body.push_body !== undefined;
      const missing = channels.filter((ch) => !templates.get(ch) && !(ch === "push" && pushGiven));
      if (missing.length === channels.length) {
        throw new NotFoundError(
          `Template '${key}' not found for channels: ${missing.join(", ")}`,
          "template_not_found",
        );
      }
      if (missing.length > 0) {
        throw new ValidationError(`Missing templates for channels: ${missing.join(", ")}`, "missing_templates", {
          details: { field: "template_key", code: "missing_templates", channels: missing },
        });
      }
      for (const ch of ["sms", "whatsapp"] as const) {
        if (templates.get(ch) && templates.get(ch)!.status !== "approved") throw templateNotApproved(key);
      }
      if (body.from_email !== undefined) await checkSender(service, team.id, body.from_email);

      const category = body.message_category ?? "transactional";
      const contents: Content[] = channels.map((ch): Content => {
        switch (ch) {
          case "email":
            return {
              channel: "email",
              template_key: key,
              from_email: body.from_email,
              from_name: body.from_name,
              category,
            };
          case "sms":
            return { channel: "sms", template_key: key, category };
          case "whatsapp":
            return {
              channel: "whatsapp",
              template_key: key,
              conversation_category: templates.get(ch)!.category ?? "UTILITY",
            };
          case "push":
            return pushGiven || !templates.get(ch)
              ? { channel: "push", title: body.push_title, body: body.push_body, category }
              : { channel: "push", template: key, category };
        }
      });
      const fallbacks = await fallbackContents(service, team, body, { recipient, contents });
      const variables = variablesOf(body.variables);
      const spec = withFallbacks(
        newSendSpec({
          team_id: team.id,
          sandbox: c.get("apiKey").test,
          trigger_type: "multi_channel",
          body,
          recipient,
          contents,
          variables,
          now,
          at,
        }),
        fallbacks,
        body,
      );
      // A channel whose live messages are kept in the outbox for want of a provider is free.
      const outboxed = await outboxedChannels(service, spec);
      if (!spec.sandbox) {
        const info = contact ? contactInfo(contact) : {};
        const total = contents.filter((content) => !outboxed.has(content.channel)).reduce(
          (sum, content) =>
            sum +
            costOfOne(deps.config, content, templates.get(content.channel), variables, info, info.phone ?? undefined),
          0,
        );
        await ensureAffordable(service, team.id, total);
      }
      const warnings = await sendWarnings(service, spec, outboxed);
      await service.acceptor.accept(spec, now);
      const scheduled = spec.scheduled_for !== null;
      return c.json({
        success: true as const,
        trigger_id: spec.trigger_id,
        job_id: spec.job_id,
        message: scheduled ? "scheduled successfully" : "queued successfully",
        channels_triggered: channels,
        executions: spec.executions.map((e) => ({ channel: e.content.channel, execution_id: e.id })),
        ...(scheduled ? { scheduled_for: new Date(spec.scheduled_for!).toISOString() } : {}),
        data: { trigger_id: spec.trigger_id, job_id: spec.job_id },
        ...(warnings.length > 0 ? { warnings } : {}),
      }, 200);
    },
  );
}

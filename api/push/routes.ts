import { DEFAULT_PLATFORM, isValidDeviceToken, PUSH_ACTION_LIMITS } from "../../shared/contacts/device_tokens.ts";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError, ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { required, templateNotFound } from "../../shared/sending/accept.ts";
import type { PushContent } from "../../shared/sending/spec.ts";
import { addSendRoute, directRecipient, sendRecipient } from "../sending/send_route.ts";
import { addExecutionRoutes } from "../triggers/execution_routes.ts";
import { hasPushTokens } from "./queries.ts";
import { PushSendBody } from "./schemas.ts";
import { PUSH_EXAMPLES } from "../sending/examples.ts";

/** The most actions any platform shows: a send to contacts reaches devices of every platform. */
const MOST_ACTIONS = Math.max(...Object.values(PUSH_ACTION_LIMITS));

/** Push sends and the push execution views, under /api/v1/push. */
export function pushRoutes(deps: Deps) {
  const app = newRouter();

  addSendRoute(app, deps, {
    channel: "push",
    tag: "Push",
    summary: "Send a push notification to a device, a contact, a tag, a segment or all contacts",
    examples: PUSH_EXAMPLES,
    description:
      "`title` and `body`, or a template (`template_key` or `template_id`), to a device token, a contact's " +
      "registered devices, a tag, a segment or everyone with push on. Transactional messages go first; promotional " +
      "ones are paced. Up to 3 `actions` on Android, 4 on iOS. `scheduled_at` schedules the send.",
    body: PushSendBody,
    delayMs: true,
    check(body) {
      if (body.template_id === undefined && body.template_key === undefined) {
        const missing = [
          ...(body.title ? [] : ["title should not be empty"]),
          ...(body.body ? [] : ["body should not be empty"]),
        ];
        if (missing.length > 0) throw new ValidationError(missing);
      }
      // A device token given alone is checked as one of its platform; a send to contacts is cut to
      // each device's platform as it is delivered.
      const limit = body.recipient_type === "direct_push"
        ? PUSH_ACTION_LIMITS[body.direct_platform ?? DEFAULT_PLATFORM]
        : body.direct_platform
        ? PUSH_ACTION_LIMITS[body.direct_platform]
        : MOST_ACTIONS;
      if (body.actions && body.actions.length > limit) {
        throw new ValidationError([`actions must contain at most ${limit} elements`]);
      }
    },
    async plan(body, team, service) {
      const templateRef = body.template_id ?? body.template_key;
      if (templateRef !== undefined && !await service.lookups.template(team.id, "push", templateRef)) {
        throw templateNotFound(templateRef);
      }
      const { recipient } = await sendRecipient(deps, team.id, body, () => {
        const token = body.direct_device_token;
        if (!token) throw required("direct_device_token");
        if (!isValidDeviceToken(token)) {
          throw new ValidationError("Invalid device token format", "invalid_device_token", {
            details: { field: "direct_device_token", code: "invalid_format" },
          });
        }
        return directRecipient(body, token, { platform: body.direct_platform });
      });
      // With fallback channels, a contact without a device is the fallback's to reach.
      const fallsBack = (body.fallback_channels?.length ?? 0) > 0;
      if (recipient.type !== "direct" && !fallsBack && !await hasPushTokens(deps.sql, team.id, recipient)) {
        throw new ValidationError("No valid push tokens for the selected recipients", "no_push_tokens");
      }
      if (body.push_identity_id && !await service.lookups.identity(team.id, "push", { id: body.push_identity_id })) {
        throw new NotFoundError(`Push identity '${body.push_identity_id}' not found`, "identity_not_found");
      }
      const content: PushContent = {
        channel: "push",
        template: templateRef,
        title: templateRef === undefined ? body.title : undefined,
        body: templateRef === undefined ? body.body : undefined,
        image_url: body.image_url,
        click_action: body.click_action,
        actions: body.actions,
        custom_data: body.custom_data,
        identity_id: body.push_identity_id,
        category: body.message_category ?? "transactional",
      };
      return { recipient, content };
    },
  });

  addExecutionRoutes(app, deps, { channel: "push", listChannel: "push", listPath: "/executions", tag: "Push" });
  return app;
}

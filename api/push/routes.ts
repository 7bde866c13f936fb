import { createRoute } from "@hono/zod-openapi";
import { isValidDeviceToken } from "../../shared/contacts/device_tokens.ts";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError, ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import {
  acceptedBody,
  contactOrThrow,
  fanOutRecipient,
  newSendIds,
  required,
  scheduledFor,
  sendingService,
  templateNotFound,
  variablesOf,
} from "../../shared/sending/accept.ts";
import type { PushContent, Recipient, SendSpec } from "../../shared/sending/spec.ts";
import { AcceptedSend, errors, jsonBody, jsonResponse } from "../messages/schemas.ts";
import { addExecutionRoutes } from "../triggers/execution_routes.ts";
import { hasPushTokens } from "./queries.ts";
import { PushSendBody } from "./schemas.ts";

const tags = ["Push"];
const ACTION_LIMITS = { android: 3, ios: 4, web: 2 } as const;

/** Push sends and the push execution views, under /api/v1/push. */
export function pushRoutes(deps: Deps) {
  const app = newRouter();
  const service = sendingService(deps);

  app.openapi(
    createRoute({
      method: "post",
      path: "/send",
      tags,
      summary: "Send a push notification to a device, a contact, a tag, a segment or all contacts",
      request: { body: jsonBody(PushSendBody) },
      responses: { 201: jsonResponse(AcceptedSend, "Queued or scheduled"), ...errors(400, 403, 404, 409, 422) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const team = c.var.team;
      const now = deps.now();
      const templateRef = body.template_id ?? body.template_key;
      if (templateRef === undefined) {
        const missing = [
          ...(body.title ? [] : ["title should not be empty"]),
          ...(body.body ? [] : ["body should not be empty"]),
        ];
        if (missing.length > 0) throw new ValidationError(missing);
      }
      const limit = ACTION_LIMITS[body.direct_platform ?? "ios"];
      if (body.actions && body.actions.length > limit) {
        throw new ValidationError([`actions must contain at most ${limit} elements`]);
      }
      const at = scheduledFor(body, now);
      if (templateRef !== undefined && !await service.lookups.template(team.id, "push", templateRef)) {
        throw templateNotFound(templateRef);
      }

      let recipient: Recipient;
      switch (body.recipient_type) {
        case "direct_push": {
          const token = body.direct_device_token;
          if (!token) throw required("direct_device_token");
          if (!isValidDeviceToken(token, body.direct_platform ?? "android")) {
            throw new ValidationError("Invalid device token format", "invalid_device_token", {
              details: { field: "direct_device_token", code: "invalid_format" },
            });
          }
          recipient = {
            type: "direct",
            address: token,
            platform: body.direct_platform,
            first_name: body.direct_first_name,
            last_name: body.direct_last_name,
          };
          break;
        }
        case "contact": {
          if (!body.contact_external_id) throw required("contact_external_id");
          const contact = await contactOrThrow(deps, team.id, body.contact_external_id);
          recipient = { type: "contact", contact_id: contact.id, external_id: contact.external_id };
          break;
        }
        default:
          recipient = await fanOutRecipient(deps, team.id, body.recipient_type, body);
      }
      if (recipient.type !== "direct" && !await hasPushTokens(deps.sql, team.id, recipient)) {
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
      const spec: SendSpec = {
        ...newSendIds(),
        team_id: team.id,
        sandbox: c.var.apiKey.test,
        trigger_type: "push",
        recipient_type: body.recipient_type,
        recipient,
        executions: [{ id: crypto.randomUUID(), content }],
        variables: variablesOf(body.variables),
        metadata: body.metadata ?? {},
        campaign_name: body.campaign_name,
        created_at: now,
        scheduled_for: at ?? null,
      };
      await service.acceptor.accept(spec, now);
      return c.json(acceptedBody(spec, now, { delayMs: true }), 201);
    },
  );

  addExecutionRoutes(app, deps, { channel: "push", listChannel: "push", listPath: "/executions", tag: "Push" });
  return app;
}

import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { isE164 } from "../../shared/phone.ts";
import {
  acceptedBody,
  contactInfo,
  contactOrThrow,
  costOfOne,
  ensureAffordable,
  fanOutRecipient,
  newSendIds,
  notE164,
  required,
  scheduledFor,
  sendingService,
  templateNotApproved,
  templateNotFound,
  variablesOf,
} from "../../shared/sending/accept.ts";
import type { RecipientInfo } from "../../shared/sending/render.ts";
import type { Recipient, SendSpec, SmsContent } from "../../shared/sending/spec.ts";
import { addExecutionRoutes } from "../triggers/execution_routes.ts";
import { AcceptedSend, errors, jsonBody, jsonResponse } from "../messages/schemas.ts";
import { SmsSendBody } from "./schemas.ts";

const tags = ["SMS"];

/** SMS sends and the SMS execution views, under /api/v1/sms. */
export function smsRoutes(deps: Deps) {
  const app = newRouter();
  const service = sendingService(deps);

  app.openapi(
    createRoute({
      method: "post",
      path: "/send",
      tags,
      summary: "Send an SMS template to a number, a contact, a tag or all contacts with SMS opt-in",
      request: { body: jsonBody(SmsSendBody) },
      responses: { 201: jsonResponse(AcceptedSend, "Queued or scheduled"), ...errors(400, 403, 404, 409, 422) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const team = c.var.team;
      const now = deps.now();
      const at = scheduledFor(body, now);
      const template = await service.lookups.template(team.id, "sms", body.template_key);
      if (!template) throw templateNotFound(body.template_key);
      if (template.status !== "approved") throw templateNotApproved(body.template_key);

      let recipient: Recipient;
      let info: RecipientInfo = {};
      let to: string | undefined;
      switch (body.recipient_type) {
        case "direct_sms": {
          const phone = body.direct_phone ?? body.direct_sms;
          if (!phone) throw required("direct_phone");
          if (!isE164(phone)) throw notE164("direct_phone");
          recipient = {
            type: "direct",
            address: phone,
            first_name: body.direct_first_name,
            last_name: body.direct_last_name,
          };
          info = { first_name: body.direct_first_name, last_name: body.direct_last_name, phone };
          to = phone;
          break;
        }
        case "contact": {
          if (!body.contact_external_id) throw required("contact_external_id");
          const contact = await contactOrThrow(deps, team.id, body.contact_external_id);
          recipient = { type: "contact", contact_id: contact.id, external_id: contact.external_id };
          info = contactInfo(contact);
          to = info.phone ?? undefined;
          break;
        }
        default:
          recipient = await fanOutRecipient(deps, team.id, body.recipient_type, body);
      }
      if (body.sms_identity_id && !await service.lookups.identity(team.id, "sms", { id: body.sms_identity_id })) {
        throw new NotFoundError(`SMS identity '${body.sms_identity_id}' not found`, "identity_not_found");
      }
      const content: SmsContent = {
        channel: "sms",
        template_key: body.template_key,
        identity_id: body.sms_identity_id,
        category: body.message_category ?? "transactional",
      };
      const variables = variablesOf(body.variables);
      if (!c.var.apiKey.test) {
        await ensureAffordable(service, team.id, costOfOne(deps.config, content, template, variables, info, to));
      }
      const spec: SendSpec = {
        ...newSendIds(),
        team_id: team.id,
        sandbox: c.var.apiKey.test,
        trigger_type: "sms",
        recipient_type: body.recipient_type,
        recipient,
        executions: [{ id: crypto.randomUUID(), content }],
        variables,
        metadata: body.metadata ?? {},
        campaign_name: body.campaign_name,
        created_at: now,
        scheduled_for: at ?? null,
      };
      await service.acceptor.accept(spec, now);
      return c.json(acceptedBody(spec, now, { delayMs: true }), 201);
    },
  );

  addExecutionRoutes(app, deps, { channel: "sms", listChannel: "sms", listPath: "/executions", tag: "SMS" });
  return app;
}

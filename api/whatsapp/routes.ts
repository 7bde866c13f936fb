import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError, ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { isE164 } from "../../shared/phone.ts";
import {
  acceptedBody,
  contactOrThrow,
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
import { whatsappPrice } from "../../shared/sending/pricing.ts";
import type { Recipient, SendSpec, WhatsAppContent } from "../../shared/sending/spec.ts";
import { AcceptedSend, errors, jsonBody, jsonResponse } from "../messages/schemas.ts";
import { addExecutionRoutes } from "../triggers/execution_routes.ts";
import { WhatsAppSendBody } from "./schemas.ts";

const tags = ["WhatsApp"];

/** WhatsApp sends and the WhatsApp execution views, under /api/v1/whatsapp. */
export function whatsappRoutes(deps: Deps) {
  const app = newRouter();
  const service = sendingService(deps);

  app.openapi(
    createRoute({
      method: "post",
      path: "/send",
      tags,
      summary: "Send an approved WhatsApp template to a number, a contact, a tag or all opted-in contacts",
      request: { body: jsonBody(WhatsAppSendBody) },
      responses: { 201: jsonResponse(AcceptedSend, "Queued or scheduled"), ...errors(400, 403, 404, 409, 422) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const team = c.var.team;
      const now = deps.now();
      const at = scheduledFor(body, now);
      const template = await service.lookups.template(team.id, "whatsapp", body.template_key);
      if (!template) throw templateNotFound(body.template_key);
      if (template.status !== "approved") throw templateNotApproved(body.template_key);
      if (template.category && template.category !== body.conversation_category) {
        throw new ValidationError(
          `Template category ${template.category} does not match conversation_category ${body.conversation_category}`,
          "category_mismatch",
          { details: { field: "conversation_category", code: "category_mismatch" } },
        );
      }

      let recipient: Recipient;
      switch (body.recipient_type) {
        case "direct_whatsapp": {
          const phone = body.direct_whatsapp ?? body.direct_phone;
          if (!phone) throw required("direct_whatsapp");
          if (!isE164(phone)) throw notE164("direct_whatsapp");
          recipient = {
            type: "direct",
            address: phone,
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
      if (
        body.whatsapp_identity_id &&
        !await service.lookups.identity(team.id, "whatsapp", { id: body.whatsapp_identity_id })
      ) {
        throw new NotFoundError(`WhatsApp identity '${body.whatsapp_identity_id}' not found`, "identity_not_found");
      }
      const content: WhatsAppContent = {
        channel: "whatsapp",
        template_key: body.template_key,
        conversation_category: body.conversation_category,
        identity_id: body.whatsapp_identity_id,
      };
      if (!c.var.apiKey.test) {
        await ensureAffordable(service, team.id, whatsappPrice(deps.config, body.conversation_category));
      }
      const spec: SendSpec = {
        ...newSendIds(),
        team_id: team.id,
        sandbox: c.var.apiKey.test,
        trigger_type: "whatsapp",
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

  addExecutionRoutes(app, deps, {
    channel: "whatsapp",
    listChannel: "whatsapp",
    listPath: "/executions",
    tag: "WhatsApp",
  });
  return app;
}

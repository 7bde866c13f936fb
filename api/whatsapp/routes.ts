import type { Deps } from "../../shared/deps.ts";
import { NotFoundError, ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { isE164 } from "../../shared/phone.ts";
import { notE164, required, templateNotApproved, templateNotFound } from "../../shared/sending/accept.ts";
import { whatsappPrice } from "../../shared/sending/pricing.ts";
import type { WhatsAppContent } from "../../shared/sending/spec.ts";
import { addSendRoute, directRecipient, sendRecipient } from "../sending/send_route.ts";
import { addExecutionRoutes } from "../triggers/execution_routes.ts";
import { WhatsAppSendBody } from "./schemas.ts";
import { WHATSAPP_EXAMPLES } from "../sending/examples.ts";

/** WhatsApp sends and the WhatsApp execution views, under /api/v1/whatsapp. */
export function whatsappRoutes(deps: Deps) {
  const app = newRouter();

  addSendRoute(app, deps, {
    channel: "whatsapp",
    tag: "WhatsApp",
    summary: "Send an approved WhatsApp template to a number, a contact, a tag or all opted-in contacts",
    examples: WHATSAPP_EXAMPLES,
    description: "The template must be approved and of the `conversation_category` given (`MARKETING`, " +
      "`UTILITY`, `AUTHENTICATION`); its placeholders `{{1}}`, `{{2}}` are filled from `variables` keyed " +
      "`1`, `2`. Charged per 24-hour conversation of a category. Marketing sends skip contacts not opted in.",
    body: WhatsAppSendBody,
    delayMs: true,
    async plan(body, team, service) {
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
      const { recipient } = await sendRecipient(deps, team.id, body, () => {
        const phone = body.direct_whatsapp ?? body.direct_phone;
        if (!phone) throw required("direct_whatsapp");
        if (!isE164(phone)) throw notE164("direct_whatsapp");
        return directRecipient(body, phone);
      });
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
      return { recipient, content, cost: () => whatsappPrice(deps.config, body.conversation_category) };
    },
  });

  addExecutionRoutes(app, deps, {
    channel: "whatsapp",
    listChannel: "whatsapp",
    listPath: "/executions",
    tag: "WhatsApp",
  });
  return app;
}

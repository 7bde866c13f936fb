import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { isE164 } from "../../shared/phone.ts";
import {
  contactInfo,
  costOfOne,
  notE164,
  required,
  templateNotApproved,
  templateNotFound,
} from "../../shared/sending/accept.ts";
import type { RecipientInfo } from "../../shared/sending/render.ts";
import type { SmsContent } from "../../shared/sending/spec.ts";
import { addSendRoute, directRecipient, sendRecipient } from "../sending/send_route.ts";
import { addExecutionRoutes } from "../triggers/execution_routes.ts";
import { SmsSendBody } from "./schemas.ts";
import { SMS_EXAMPLES } from "../sending/examples.ts";

/** SMS sends and the SMS execution views, under /api/v1/sms. */
export function smsRoutes(deps: Deps) {
  const app = newRouter();

  addSendRoute(app, deps, {
    channel: "sms",
    tag: "SMS",
    summary: "Send an SMS template to a number, a contact, a tag or all contacts with SMS opt-in",
    examples: SMS_EXAMPLES,
    description:
      "The template must exist for `template_key` and serve the recipient's country. `direct_phone` is E.164. A " +
      "live key's wallet must cover the message (charged per segment: 160 GSM-7 characters, 70 with Unicode). " +
      "`triggerAt` schedules the send. 404 when the contact is unknown.",
    body: SmsSendBody,
    delayMs: true,
    async plan(body, team, service) {
      const template = await service.lookups.template(team.id, "sms", body.template_key);
      if (!template) throw templateNotFound(body.template_key);
      if (template.status !== "approved") throw templateNotApproved(body.template_key);
      const phone = body.direct_phone ?? body.direct_sms;
      const { recipient, contact } = await sendRecipient(deps, team.id, body, () => {
        if (!phone) throw required("direct_phone");
        if (!isE164(phone)) throw notE164("direct_phone");
        return directRecipient(body, phone);
      });
      // Rendered for the recipient when known: an SMS is billed per segment.
      const info: RecipientInfo = contact
        ? contactInfo(contact)
        : recipient.type === "direct"
        ? { first_name: body.direct_first_name, last_name: body.direct_last_name, phone }
        : {};
      const to = recipient.type === "direct" ? phone : info.phone ?? undefined;
      if (body.sms_identity_id && !await service.lookups.identity(team.id, "sms", { id: body.sms_identity_id })) {
        throw new NotFoundError(`SMS identity '${body.sms_identity_id}' not found`, "identity_not_found");
      }
      const content: SmsContent = {
        channel: "sms",
        template_key: body.template_key,
        identity_id: body.sms_identity_id,
        category: body.message_category ?? "transactional",
      };
      return {
        recipient,
        content,
        cost: (variables) => costOfOne(deps.config, content, template, variables, info, to),
      };
    },
  });

  addExecutionRoutes(app, deps, { channel: "sms", listChannel: "sms", listPath: "/executions", tag: "SMS" });
  return app;
}

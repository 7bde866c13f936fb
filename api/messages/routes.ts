import type { Deps } from "../../shared/deps.ts";
import { ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { isEmail } from "../../shared/email.ts";
import { checkSender, required, templateNotFound } from "../../shared/sending/accept.ts";
import type { EmailContent } from "../../shared/sending/spec.ts";
import { addSendRoute, directRecipient, sendRecipient } from "../sending/send_route.ts";
import { addExecutionRoutes } from "../triggers/execution_routes.ts";
import { EmailSendBody } from "./schemas.ts";
import { addTriggerRoute } from "./trigger.ts";
import { EMAIL_EXAMPLES } from "../sending/examples.ts";

/** Email sends, the multi-channel trigger and the email execution views, under /api/v1/messages. */
export function messagesRoutes(deps: Deps) {
  const app = newRouter();

  addSendRoute(app, deps, {
    channel: "email",
    tag: "Email",
    summary: "Send an email to an address, a contact, a tag, a segment or all contacts",
    examples: EMAIL_EXAMPLES,
    description:
      "Without a template, `subject` and `content` (HTML) carry the message; with `template_key`, the template " +
      "supplies them and `variables` fill it. The sender is the team's default identity unless `from_email` (on a " +
      "verified domain) and `from_name` say otherwise. Answers 201 with the `trigger_id` at once; delivery follows " +
      "in the background.",
    body: EmailSendBody,
    delayMs: false,
    executionFields: true,
    async plan(body, team, service) {
      const { recipient } = await sendRecipient(deps, team.id, body, () => {
        if (!body.direct_email) throw required("direct_email");
        if (!isEmail(body.direct_email)) throw new ValidationError(["direct_email must be an email"]);
        return directRecipient(body, body.direct_email);
      });
      const content: EmailContent = {
        channel: "email",
        from_email: body.from_email,
        from_name: body.from_name,
        reply_to: body.reply_to,
        category: body.message_category ?? "transactional",
      };
      if (body.template_key) {
        if (!await service.lookups.template(team.id, "email", body.template_key)) {
          throw templateNotFound(body.template_key);
        }
        content.template_key = body.template_key;
      } else {
        const missing = [
          ...(body.subject ? [] : ["subject should not be empty"]),
          ...(body.content || body.plain_text_content ? [] : ["content should not be empty"]),
        ];
        if (missing.length > 0) throw new ValidationError(missing);
        content.subject = body.subject;
        content.html = body.content;
        content.text = body.plain_text_content;
      }
      if (body.from_email !== undefined) await checkSender(service, team.id, body.from_email);
      if (body.reply_to !== undefined && !isEmail(body.reply_to)) {
        throw new ValidationError(["reply_to must be an email"]);
      }
      return { recipient, content };
    },
  });

  addTriggerRoute(app, deps);
  addExecutionRoutes(app, deps, { listChannel: "email", listPath: "/", tag: "Email" });
  return app;
}

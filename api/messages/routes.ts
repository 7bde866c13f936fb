import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import {
  acceptedBody,
  checkSender,
  contactOrThrow,
  fanOutRecipient,
  isEmail,
  newSendIds,
  required,
  scheduledFor,
  sendingService,
  templateNotFound,
  variablesOf,
} from "../../shared/sending/accept.ts";
import type { EmailContent, Recipient, SendSpec } from "../../shared/sending/spec.ts";
import { addExecutionRoutes } from "../triggers/execution_routes.ts";
import { AcceptedSend, EmailSendBody, errors, jsonBody, jsonResponse } from "./schemas.ts";
import { addTriggerRoute } from "./trigger.ts";

const tags = ["Email"];

/** Email sends, the multi-channel trigger and the email execution views, under /api/v1/messages. */
export function messagesRoutes(deps: Deps) {
  const app = newRouter();
  const service = sendingService(deps);

  app.openapi(
    createRoute({
      method: "post",
      path: "/send",
      tags,
      summary: "Send an email to an address, a contact, a tag, a segment or all contacts",
      request: { body: jsonBody(EmailSendBody) },
      responses: { 201: jsonResponse(AcceptedSend, "Queued or scheduled"), ...errors(400, 403, 404, 409, 422) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const team = c.var.team;
      const now = deps.now();
      const at = scheduledFor(body, now);

      let recipient: Recipient;
      switch (body.recipient_type) {
        case "direct_email":
          if (!body.direct_email) throw required("direct_email");
          if (!isEmail(body.direct_email)) throw new ValidationError(["direct_email must be an email"]);
          recipient = {
            type: "direct",
            address: body.direct_email,
            first_name: body.direct_first_name,
            last_name: body.direct_last_name,
          };
          break;
        case "contact": {
          if (!body.contact_external_id) throw required("contact_external_id");
          const contact = await contactOrThrow(deps, team.id, body.contact_external_id);
          recipient = { type: "contact", contact_id: contact.id, external_id: contact.external_id };
          break;
        }
        default:
          recipient = await fanOutRecipient(deps, team.id, body.recipient_type, body);
      }

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

      const spec: SendSpec = {
        ...newSendIds(),
        team_id: team.id,
        sandbox: c.var.apiKey.test,
        trigger_type: "email",
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
      return c.json(acceptedBody(spec, now, { delayMs: false }), 201);
    },
  );

  addTriggerRoute(app, deps);
  addExecutionRoutes(app, deps, { listChannel: "email", listPath: "/", tag: "Email" });
  return app;
}
